"""A spark-submit job: the project's session from the default Config (with its warm-up
on), what the session actually has (the test compares it with the command line), and
what the session's end (contest.infra.spark.spark_session: the warm-up joined, then
stop_session) left: pyspark's accumulator server, threads, the context."""

import dataclasses
import json
import threading

from pyspark import SparkContext

from contest.config import Config
from contest.infra.spark import spark_session

cfg = Config()
cfg = dataclasses.replace(cfg, spark=dataclasses.replace(cfg.spark, warm_up=True))
with spark_session(cfg, "submitted-conf") as spark:
    sc = spark.sparkContext
    saw = {
        "master": sc.master,
        "shuffle_partitions": spark.conf.get("spark.sql.shuffle.partitions"),
        "driver_memory": sc.getConf().get("spark.driver.memory", None),
        "heap_mb": sc._jvm.java.lang.Runtime.getRuntime().maxMemory() // 2**20,
        "default_parallelism": sc.defaultParallelism,
    }
    # Python tasks send their accumulator updates to the driver's accumulator server.
    counted = sc.accumulator(0)
    sc.parallelize(range(10), 2).foreach(lambda _: counted.add(1))
    server = sc._accumulatorServer
# The accumulator server's shutdown was left to a thread of its own: it ends by itself.
for thread in threading.enumerate():
    if thread.name == "accumulator-server-stop":
        thread.join(timeout=10)
saw |= {
    "accumulated": counted.value,
    "server_closed": server.socket.fileno() == -1 and server.server_shutdown,
    "threads_left": [
        t.name for t in threading.enumerate() if t.name.startswith(("acc", "contest"))
    ],
    "context_gone": SparkContext._active_spark_context is None,
}
print(json.dumps(saw))
