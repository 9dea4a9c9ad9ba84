"""A spark-submit job under spark.python_preload: where the driver and a worker import
pyspark from, and which module runs the worker daemon."""

import json

import pyarrow as pa

from contest.config import load_config, override
from contest.infra.spark import build_session

cfg = override(load_config(), {"spark.python_preload": "true", "spark.ui": "false"})
spark = build_session(cfg, "python-preload")


def probe(batches):
    import sys

    import pyspark

    main = getattr(sys.modules["__main__"].__spec__, "name", None)
    for _ in batches:
        yield pa.RecordBatch.from_pylist([{"pyspark": pyspark.__file__, "daemon": main}])


import pyspark  # noqa: E402 (after the session: build_session chose where it comes from)

row = spark.range(1).mapInArrow(probe, "pyspark string, daemon string").collect()[0]
print(json.dumps({"driver": pyspark.__file__, "worker": row.pyspark, "daemon": row.daemon}))
spark.stop()
