"""The exhaustive search: one `explore()` (checker.search.explore) that runs the search in one
process (bfs) or a process pool (parallel), the shared result types (result), the visited set,
frontier, parent links and run directory, liveness on the explored graph, rounds and schedules,
and the search on Spark (spark_bfs)."""
