"""Infrastructure the stages run on: PostgreSQL, Spark, storage, processes, JVM packages."""
