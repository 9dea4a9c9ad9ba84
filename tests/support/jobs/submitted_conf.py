"""A spark-submit job: builds the project's session from the default Config and prints
what the session actually has (the test compares it with the command line)."""

import json

from contest.config import Config
from contest.infra.spark import build_session

spark = build_session(Config(), "submitted-conf")
sc = spark.sparkContext
print(
    json.dumps(
        {
            "master": sc.master,
            "shuffle_partitions": spark.conf.get("spark.sql.shuffle.partitions"),
            "driver_memory": sc.getConf().get("spark.driver.memory", None),
            "heap_mb": sc._jvm.java.lang.Runtime.getRuntime().maxMemory() // 2**20,
            "default_parallelism": sc.defaultParallelism,
        }
    )
)
spark.stop()
