"""Configuration for tests: their own PostgreSQL folder and port, small Spark."""

from __future__ import annotations

import os
from pathlib import Path

from contest.config import Config, load_config

REPO = Path(__file__).resolve().parents[2]
TEST_STATE = REPO / ".state" / "tests"
TEST_PG_PORT = 54331
TEST_LOAD_WINDOW_S = 0.05
# A workload whose schema evolves over four small batches (tag and clicks added by batches
# 1 and 2, hits widened by batch 3), with updates, repeated keys, NULLs and "null"
# strings: the history tests' data, a peer format's and stock LakeSoul's alike.
EVOLVING_HISTORY = {
    "workload.batches": 4,
    "workload.first_rows": 300,
    "workload.batch_rows": 200,
    "workload.update_share": 0.5,
    "workload.repeat_share": 0.1,
    "workload.null_share": 0.2,
    "workload.null_string_share": 0.3,
    "workload.columns": {"tag": "UseLastNotNull", "clicks": "SumAll", "hits": "SumAll"},
    "workload.added": {"tag": 1, "clicks": 2},
    "workload.widened": {"hits": 3},
}


def make_config(tmp: Path, **overrides: object) -> Config:
    """Tests get their own cluster folder and port, so a user's cluster is untouched.
    An external PostgreSQL given by LAKESOUL_PG_* is used as is."""
    base = {
        "state_dir": str(TEST_STATE),
        "work_dir": str(tmp),
        "results_dir": str(tmp / "results"),
        "pg.port": TEST_PG_PORT,
        "spark.master": "local[2]",
        "spark.shuffle_partitions": 4,
        "spark.ui": False,
        "spark.driver_memory": "2g",
        # The load sampled around each timed job: over 0.05 s, not 0.5 (2 s an evaluation).
        "load_window_s": TEST_LOAD_WINDOW_S,
    }
    base.update(overrides)
    return load_config(env=os.environ, overrides=base)


def cli(cfg: Config, *args: str) -> list[str]:
    """`contest` arguments that point the command at the test cluster and work folder."""
    return [
        "--set",
        f"state_dir={cfg.state_dir}",
        "--set",
        f"work_dir={cfg.work_dir}",
        "--set",
        f"results_dir={cfg.results_dir}",
        "--set",
        f"pg.port={cfg.pg.port}",
        "--set",
        f"spark.master={cfg.spark.master}",
        "--set",
        "spark.ui=false",
        "--set",
        f"load_window_s={cfg.load_window_s}",
        *args,
    ]
