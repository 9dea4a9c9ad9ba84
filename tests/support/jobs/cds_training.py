"""A spark-submit job run once per checkout (tests/support/cds.py): the classes a small
job of the harness loads (a session, Arrow to and from Python, a shuffle, a join, a
window, Parquet written and read) are dumped at its exit into the test run's class-data
archive, which every later test JVM maps instead of loading and verifying them again."""

import sys

import pyarrow as pa
from pyspark.sql import SparkSession, Window
from pyspark.sql import functions as F

out = sys.argv[1]
spark = (
    SparkSession.builder.master("local[2]")
    .appName("contest-tests-cds")
    .config("spark.ui.enabled", "false")
    .config("spark.sql.shuffle.partitions", "4")
    .config("spark.sql.execution.arrow.pyspark.enabled", "true")
    .getOrCreate()
)
rows = pa.table({"uuid": [f"k{i % 50}" for i in range(500)], "requests": list(range(500))})
df = spark.createDataFrame(rows.to_pandas())
agg = df.groupBy("uuid").agg(F.sum("requests").alias("requests"), F.count("*").alias("n"))
last = df.withColumn("rn", F.row_number().over(Window.partitionBy("uuid").orderBy("requests")))
first = last.where("rn = 1").select("uuid", F.col("requests").alias("first"))
joined = agg.join(first, "uuid", "left")
joined.write.mode("overwrite").parquet(out)
back = spark.read.parquet(out)
batches = back.mapInArrow(lambda it: (b for b in it), back.schema)
assert batches.count() == 50 and len(back.toPandas()) == 50
spark.stop()
