"""A spark-submit job: where the executors import `contest` and `meta.sql` from."""

import json

from pyspark.sql import SparkSession


def where(_):
    import importlib.resources
    import os

    import meta.sql

    import contest.infra.storage

    sql = sorted(p.name for p in importlib.resources.files(meta.sql).iterdir())
    return {"contest": contest.infra.storage.__file__, "cwd": os.getcwd(), "sql": sql}


spark = SparkSession.builder.appName("where-imported").getOrCreate()
print(json.dumps(spark.sparkContext.parallelize(range(2), 2).map(where).collect()))
spark.stop()
