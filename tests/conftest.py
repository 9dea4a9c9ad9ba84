"""Shared fixtures: one real PostgreSQL and one real Spark session per test run, and the
markers that say which of these real components a test needs."""

from __future__ import annotations

import os
import shutil
from collections import Counter
from collections.abc import Iterable, Sequence
from pathlib import Path

import pytest

from contest.config import Config
from tests.support import fast_tier
from tests.support.config import TEST_PG_PORT, TEST_STATE, make_config

# Every child a test starts through the harness dies with the test (tests/support/reaper.py).
pytest_plugins = ["tests.support.reaper"]

# The Spark drivers the tests start for a few seconds each (spark-submit jobs, child
# sessions with a format's jars) compile with C1 only: such a JVM's start then costs
# about 40% less CPU, and on tiny data it does little else; what a job computes is the
# same. SPARK_SUBMIT_OPTS reaches every spark-submit's JVM and prints nothing (Java's
# JDK_JAVA_OPTIONS would add a note to each job's stderr). The tests' own session keeps
# C2 (the `spark` fixture: it lives the whole run). A SPARK_SUBMIT_OPTS the user set is
# kept as it is.
TEST_JVM_OPTIONS = "-XX:TieredStopAtLevel=1"
os.environ.setdefault("SPARK_SUBMIT_OPTS", TEST_JVM_OPTIONS)
# ... and, when the run has Spark tests, map the checkout's class-data archive (built once
# per checkout: tests/support/cds.py): a job's JVM then costs a quarter to a third less CPU.
# The options the tests' JVMs get, once collection knows whether any test needs Spark:
_jvm_options = {"submit": TEST_JVM_OPTIONS, "archive": ""}

# The markers a test gets from the fixtures it uses, directly or through other fixtures:
# set here, so they cannot drift from what the test does (`-m "not spark"` selects the
# tests that start no Spark). A test that runs a component in a child process without its
# fixture marks itself.
FIXTURE_MARKERS = {
    "spark": ("spark",),
    "pg": ("pg",),
    "s3": ("s3",),
    "standalone": ("standalone", "spark"),
}


def fixture_markers(fixturenames: Iterable[str]) -> set[str]:
    """The markers for a test that uses these fixtures (their whole closure)."""
    return {mark for name in fixturenames for mark in FIXTURE_MARKERS.get(name, ())}


# `--dist loadfile` runs now (a module's tests on one worker): with pytest 9.2 and xdist 3.8
# loadgroup groups nothing (xdist sets `item._nodeid`, which pytest 9 no longer reads;
# docs/development/tests.md). The groups below are for loadgroup once it works again.
# Under pytest-xdist (`./build.sh test`, two workers, `--dist loadgroup`) the tests of a
# server a worker starts for the rest of its run (the Spark standalone cluster, S3Proxy)
# run on one worker; every other test runs on the worker of its module's other tests, so
# a module-scoped fixture (a peer's table history, a shared session's tables) is built
# once, not once on each worker that gets one of its tests (loadgroup sends an ungrouped
# test alone).
SERVER_MARKERS = {"standalone", "s3"}


def xdist_group_name(nodeid: str, marks: set[str]) -> str:
    """The one xdist group of a test: the servers' group, else its module's path."""
    return "servers" if marks & SERVER_MARKERS else nodeid.split("::", 1)[0]


def heaviest_first(groups: Sequence[str], slow: Sequence[bool]) -> list[int]:
    """The tests' order (their indices) with the groups holding more slow tests first,
    each group's tests in their own order: xdist hands out whole groups in the order it
    meets them, so a long group is started early instead of left to run alone at the end."""
    weight = Counter(g for g, s in zip(groups, slow, strict=True) if s)
    return sorted(range(len(groups)), key=lambda i: -weight[groups[i]])


def pytest_addoption(parser) -> None:
    parser.addoption(
        "--fast",
        action="store_true",
        help="the fast tier (./build.sh test --fast): only tests that start no JVM and no "
        "server and are not slow; a test that starts one anyway fails, naming its marker",
    )


def pytest_configure(config) -> None:
    if config.getoption("--fast"):
        own = getattr(config, "workerinput", {}).get("workerid", "main")
        folder = TEST_STATE / "fast-tier" / own
        fast_tier.install_guard(folder / "bin", folder / "calls.log")


@pytest.fixture(autouse=True)
def _fast_tier_guard(request):
    """In the fast tier, a test that ran java or a PostgreSQL server fails after it."""
    yield
    if request.config.getoption("--fast"):
        log = os.environ.get(fast_tier.LOG_VARIABLE)
        calls = fast_tier.calls_of(Path(log), request.node.nodeid) if log else []
        if calls:
            pytest.fail(fast_tier.refusal(calls), pytrace=False)


def pytest_collection_modifyitems(config, items) -> None:
    group_of = {}
    for item in items:
        # item.fixturenames is the closure: the fixtures of its fixtures are in it too.
        marks = fixture_markers(getattr(item, "fixturenames", ()))
        for mark in sorted(marks):
            item.add_marker(mark)
        # One group a test: xdist joins several groups' names into one new group.
        group_of[item.nodeid] = xdist_group_name(item.nodeid, marks)
        if not any(item.iter_markers("xdist_group")):
            item.add_marker(pytest.mark.xdist_group(group_of[item.nodeid]))
    if config.getoption("--fast"):
        fast_tier.select(config, items)
    if hasattr(config, "workerinput"):  # an xdist worker: the order the groups are sent in
        groups = [group_of[item.nodeid] for item in items]
        slow = [item.get_closest_marker("slow") is not None for item in items]
        items[:] = [items[i] for i in heaviest_first(groups, slow)]


def pytest_collection_finish(session) -> None:
    # After -m and -k have deselected: a run of tests without Spark builds nothing, nor
    # does a run that only collects (--collect-only).
    if session.config.option.collectonly:
        return
    if os.environ.get("SPARK_SUBMIT_OPTS") == TEST_JVM_OPTIONS and any(
        item.get_closest_marker("spark") for item in session.items
    ):
        use_class_data_archive(session.config)


def use_class_data_archive(config) -> None:
    """Every test JVM maps the checkout's class-data archives (built now if missing)."""
    from contest.infra import cds
    from tests.support.cds import archive_options

    if not (TEST_STATE / "cds" / cds.STAMP).is_file():
        reporter = config.pluginmanager.get_plugin("terminalreporter")
        if reporter is not None:
            reporter.write_line(
                f"building the test JVMs' class-data archives in {TEST_STATE / 'cds'}"
            )
    driver, launcher = archive_options(TEST_STATE, TEST_JVM_OPTIONS)
    if driver:
        _jvm_options.update(submit=f"{TEST_JVM_OPTIONS} {driver}", archive=driver)
        os.environ["SPARK_SUBMIT_OPTS"] = _jvm_options["submit"]
        os.environ.setdefault("SPARK_LAUNCHER_OPTS", launcher)


def worker_state(config) -> dict[str, object]:
    """Under pytest-xdist each worker has its own state folder and port, so its own
    PostgreSQL, Spark standalone cluster and S3 server: the tests name their tables as if
    they were alone. One process (no -n) uses the tests' folder and port as they are."""
    worker = getattr(config, "workerinput", {}).get("workerid")
    if worker is None:
        return {}
    return {
        "state_dir": str(TEST_STATE / worker),
        "pg.port": TEST_PG_PORT + 1 + int(worker.removeprefix("gw")),
    }


@pytest.fixture(scope="session")
def session_tmp(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("work")


def docker_answers() -> bool:
    """A Docker engine that answers (none runs on the project's own machines)."""
    import subprocess

    if shutil.which("docker") is None:
        return False
    try:
        return subprocess.run(["docker", "info"], capture_output=True, timeout=10).returncode == 0
    except (OSError, subprocess.SubprocessError):
        return False


@pytest.fixture(scope="session")
def _container():
    """PostgreSQL in a container when Docker answers and no external server is set."""
    if os.environ.get("LAKESOUL_PG_URL") or not docker_answers():
        yield None
        return
    import secrets

    from testcontainers.postgres import PostgresContainer

    password = secrets.token_urlsafe(16)
    with PostgresContainer(
        "postgres:15", username="lakesoul", password=password, dbname="lakesoul_contest"
    ) as pgc:
        host, port = pgc.get_container_host_ip(), pgc.get_exposed_port(5432)
        env = {
            "LAKESOUL_PG_URL": f"jdbc:postgresql://{host}:{port}/lakesoul_contest",
            "LAKESOUL_PG_USERNAME": "lakesoul",
            "LAKESOUL_PG_PASSWORD": password,
        }
        os.environ.update(env)  # `contest` commands run by tests read it too
        try:
            yield {
                "pg.url": env["LAKESOUL_PG_URL"],
                "pg.username": "lakesoul",
                "pg.password": password,
            }
        finally:
            for key in env:
                os.environ.pop(key, None)


@pytest.fixture(scope="session")
def cfg(session_tmp, _container, request) -> Config:
    return make_config(session_tmp, **worker_state(request.config), **(_container or {}))


@pytest.fixture(scope="session")
def pg(cfg):
    """Embedded cluster by default; a container or an external server when there is one."""
    from contest.infra.postgres import EmbeddedCluster, ensure_database

    if cfg.pg.external:
        yield ensure_database(cfg)
        return
    cluster = EmbeddedCluster(cfg)
    started = not cluster.running()  # another test session may share it: leave it running
    yield ensure_database(cfg)
    if started:
        cluster.down()


@pytest.fixture(scope="session")
def spark(cfg):
    from contest.infra.spark import build_session
    from meta.distributed import JDBC_PACKAGE

    ours = os.environ.get("SPARK_SUBMIT_OPTS") == _jvm_options["submit"]
    if ours:  # this JVM runs the whole run long: C2's compiled code pays off
        if _jvm_options["archive"]:
            os.environ["SPARK_SUBMIT_OPTS"] = _jvm_options["archive"]
        else:
            del os.environ["SPARK_SUBMIT_OPTS"]
    try:
        session = build_session(cfg, "contest-tests", (JDBC_PACKAGE,))
    finally:
        if ours:
            os.environ["SPARK_SUBMIT_OPTS"] = _jvm_options["submit"]
    yield session
    session.stop()


@pytest.fixture
def table_dir(tmp_path) -> Path:
    path = tmp_path / "table"
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture(scope="session")
def standalone(cfg):
    """One Spark standalone cluster (2 workers x 1 core, 1g) for the whole run."""
    from contest.infra.cluster import Standalone

    cluster = Standalone.of(cfg)
    state = cluster.up(workers=2, cores=1, memory="1g")
    yield state
    cluster.down()


@pytest.fixture(scope="session")
def s3(cfg):
    """The embedded S3 server (S3Proxy) for the whole run: its settings as a Config."""
    import dataclasses

    from contest.config import ObjectStoreConfig
    from contest.infra.s3server import EmbeddedS3

    server = EmbeddedS3.of(cfg)
    info, how = server.up()  # another test session may share it: leave it running
    store = ObjectStoreConfig(
        endpoint=info["endpoint"],
        region=info["region"],
        access_key=info["access_key"],
        secret_key=info["secret_key"],
    )
    yield dataclasses.replace(cfg, s3=store)
    if how == "started":
        server.down()
