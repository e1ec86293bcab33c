"""`kcheck conform`: drive the real Kafka code (jars, in-process through JPype) along the model's
behaviours and compare an abstraction of it with the model's state after every step.

jvm.py starts the JVM, adapter.py holds the contract an adapter per model fulfils, engine.py the
behaviour sources, step loop and report, command.py the subcommand; kraft.py and replication.py
are the adapters.
"""
