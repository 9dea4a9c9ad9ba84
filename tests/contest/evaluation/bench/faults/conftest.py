"""A fault experiments' context on tiny generated data in the test's own work folder:
the real PostgreSQL and Spark session of the run, real `contest` child processes."""

from __future__ import annotations

import pytest

from contest.config import override


@pytest.fixture
def fault_ctx(cfg, spark, pg, tmp_path):
    from contest.evaluation.bench.faults.context import make_context

    work = override(cfg, {"work_dir": str(tmp_path / "work")})
    return make_context(work, spark, pg, 0.0002, 5, say=lambda _: None)
