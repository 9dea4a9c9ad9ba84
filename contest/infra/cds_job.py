"""The Spark job whose JVM classes become the class-data archive (contest/infra/cds.py):
what the timed jobs do before and around their work, small: a session, Python tasks
over Arrow (mapInArrow) from a range and from parallelized rows, a shuffle, a parquet
file written and read by Spark, collect, stop. Run by spark-submit with a folder."""

from __future__ import annotations

import sys
from collections.abc import Iterable, Iterator
from typing import Any

from pyspark.sql import SparkSession, Window
from pyspark.sql import functions as F


def main(folder: str) -> None:
    spark = SparkSession.builder.appName("contest-cds").getOrCreate()

    def same(batches: Iterable[Any]) -> Iterator[Any]:
        yield from batches

    if spark.range(10).mapInArrow(same, "id long").count() != 10:
        raise SystemExit("the archive job lost rows")
    rows = spark.sparkContext.parallelize([(0, 1), (1, 2)], 2).toDF("start long, stop long")
    if len(rows.mapInArrow(same, "start long, stop long").collect()) != 2:
        raise SystemExit("the archive job lost rows")
    rows.write.mode("overwrite").parquet(folder)
    if spark.read.parquet(folder).count() != 2:
        raise SystemExit("the archive job lost rows")
    # What the harness's Spark SQL paths load too (the peers, the tests' checks): an
    # aggregation, a window, a join, rows to and from pandas over Arrow.
    spark.conf.set("spark.sql.execution.arrow.pyspark.enabled", "true")
    df = spark.range(500).select((F.col("id") % 50).cast("string").alias("k"), "id")
    agg = df.groupBy("k").agg(F.sum("id").alias("s"), F.count("*").alias("n"))
    ranked = df.withColumn("rn", F.row_number().over(Window.partitionBy("k").orderBy("id")))
    joined = agg.join(ranked.where("rn = 1").select("k", "id"), "k", "left")
    if len(joined.toPandas()) != 50 or spark.createDataFrame(joined.toPandas()).count() != 50:
        raise SystemExit("the archive job lost rows")
    spark.stop()


if __name__ == "__main__":
    main(sys.argv[1])
