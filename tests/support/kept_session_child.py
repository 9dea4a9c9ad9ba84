"""Two commands' sessions inside `kept_session` (contest/infra/spark.py), in a process of
its own (a fresh JVM: the test process's session would be found running instead).

usage: python -m tests.support.kept_session_child CONFIG.toml STEPS.json (steps unused)
Prints one JSON line: the application ids the two commands ran in, whether the second
found the first's context running, and whether any context is left after the block.
"""

from __future__ import annotations

import json
import sys

from pyspark import SparkContext

from contest.config import load_config
from contest.infra.spark import kept_session, spark_session


def main(config_file: str, _steps: str) -> int:
    cfg = load_config(config_file)
    with kept_session():
        with spark_session(cfg, "first") as one:
            first = one.sparkContext.applicationId
        running = SparkContext._active_spark_context is not None
        with spark_session(cfg, "second") as two:
            second = two.sparkContext.applicationId
            rows = two.range(3).count()
    left = SparkContext._active_spark_context is not None
    print(json.dumps({"ids": [first, second], "running": running, "rows": rows, "left": left}))
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:3]))
