"""A fault experiments' context on tiny generated data in the test's own work folder:
the real PostgreSQL and Spark session of the run, real `contest` child processes."""

from __future__ import annotations

import pytest

from contest.config import override

# The experiments' fixed table names: the test cluster outlives a test run, and a table
# of an earlier run sits at another run's folder.
TABLES = (
    "faults_nest_a",
    "faults_nest_b",
    "faults_nest_inner",
    "faults_nest_outer",
    "faults_user_folders",
)


@pytest.fixture
def fault_ctx(cfg, spark, pg, tmp_path):
    from contest.trials.faults.context import make_context
    from meta import catalog

    for name in TABLES:
        catalog.drop_table(pg, name, cfg.table.namespace)
    work = override(cfg, {"work_dir": str(tmp_path / "work")})
    return make_context(work, spark, pg, 0.0002, 5, say=lambda _: None)
