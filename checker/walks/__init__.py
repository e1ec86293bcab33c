"""Random walks: the walker (walker), guided search (guided), shrinking (shrink), walks on Spark
(spark) and the `kcheck simulate` command that drives them (simulate)."""
