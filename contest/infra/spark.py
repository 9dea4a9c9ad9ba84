"""The Spark session, built from the config and nothing else."""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from contest.config import Config, ObjectStoreConfig, SparkConfig
from contest.config.stores import object_store_env
from contest.infra import timeline, warm_up
from contest.infra.connector import ensure_resolvable
from contest.infra.pyspark_daemon import prefer_installed_pyspark
from contest.infra.storage import configure, s3a_conf

if TYPE_CHECKING:
    from pyspark.sql import SparkSession


# The log file of the session this process started (its JVM's), once it has one.
_session_log: Path | None = None


class _Keeper:
    """The session kept for one application's commands (`kept_session`): while
    `keeping`, the first session a command starts is kept in `session`, and the later
    commands run in it."""

    keeping = False
    session: Any = None


_keeper = _Keeper()


@contextmanager
def kept_session() -> Iterator[None]:
    """Inside: one application's commands share the session the first of them starts
    (a workload lane's long-lived application, contest/cli/application.py, as a
    pipeline keeps its session); it is stopped when the block ends, not by a command."""
    _keeper.keeping, _keeper.session = True, None
    try:
        yield
    finally:
        kept, _keeper.keeping, _keeper.session = _keeper.session, False, None
        if kept is not None:
            stop_session(kept)


# How a session announces its UI (`contest.evaluation.progress` finds it in a job's log).
UI_LINE_PREFIX = "Spark UI: "


def log_config(to_file: bool = False) -> Path:
    """The log4j2 configuration shipped with the package: warnings only, on the
    terminal (spark-submit command lines) or in a log file (a command's own session)."""
    name = "log4j2-file.properties" if to_file else "log4j2.properties"
    return Path(__file__).resolve().parent / name


def log_java_option(log_file: Path | None = None) -> str:
    if log_file is None:
        return f"-Dlog4j2.configurationFile=file:{log_config()}"
    return f"-Dlog4j2.configurationFile=file:{log_config(True)} -Dcontest.log.file={log_file}"


def driver_java_options(spark: SparkConfig, log_file: Path | None = None, *more: str) -> str:
    """The driver JVM's options: the log's, the configured ones (spark.java_options),
    then `more` (a timed job's class-data archive, a library's class path)."""
    return " ".join(o for o in (log_java_option(log_file), spark.java_options, *more) if o)


def session_log_path(cfg: Config, app_name: str) -> Path:
    """Where a command's session logs: the work folder's logs/, one file per run."""
    stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime())
    return cfg.work_path / "logs" / f"{app_name}-{stamp}-{os.getpid()}.log"


def log_note() -> str:
    """` (Spark's log: PATH)` when this process's session wrote to its log file."""
    path = _session_log
    if path is None or not path.is_file() or path.stat().st_size == 0:
        return ""
    return f" (Spark's log: {path})"


def session_conf(
    cfg: Config, packages: tuple[str, ...] = (), log_file: Path | None = None
) -> dict[str, str]:
    conf = {
        "spark.driver.extraJavaOptions": driver_java_options(cfg.spark, log_file),
        "spark.sql.shuffle.partitions": str(cfg.spark.shuffle_partitions),
        "spark.driver.memory": cfg.spark.driver_memory,
        "spark.ui.enabled": str(cfg.spark.ui).lower(),
        "spark.ui.showConsoleProgress": "false",
        # Python workers must import the same packages (lakesoul, pyarrow) as the driver.
        "spark.pyspark.python": sys.executable,
        "spark.pyspark.driver.python": sys.executable,
        "spark.sql.execution.arrow.pyspark.enabled": "true",
        "spark.sql.session.timeZone": "UTC",
        # A user's timestamps written as Parquet's TIMESTAMP(MICROS), zone flag kept
        # (Spark's default, INT96, reads back as a zoneless nanosecond timestamp).
        "spark.sql.parquet.outputTimestampType": "TIMESTAMP_MICROS",
    }
    jars = list(packages) + ([cfg.spark.connector] if cfg.spark.use_connector else [])
    if jars:
        conf["spark.jars.packages"] = ",".join(jars)
    if cfg.spark.use_connector:
        conf.update(
            {
                "spark.sql.extensions": "com.dmetasoul.lakesoul.sql.LakeSoulSparkSessionExtension",
                "spark.sql.catalog.lakesoul": (
                    "org.apache.spark.sql.lakesoul.catalog.LakeSoulCatalog"
                ),
                "spark.sql.defaultCatalog": "lakesoul",
            }
        )
    if cfg.s3.configured:
        conf.update(object_store_conf(cfg.s3))
    if cfg.spark.python_preload:
        conf["spark.python.daemon.module"] = "contest.infra.pyspark_daemon"
    conf.update(cfg.spark.conf)
    return conf


def object_store_conf(store: ObjectStoreConfig) -> dict[str, str]:
    """The object store for Spark: executors' Python tasks get it as the AWS variables
    (contest.infra.storage reads them), Spark's own readers as s3a settings."""
    conf = {f"spark.executorEnv.{k}": v for k, v in object_store_env(store).items()}
    conf.update(s3a_conf(store))
    return conf


# Settings that only take effect when the driver's JVM starts: under spark-submit they
# are its command line's (--driver-memory, --packages, --driver-java-options).
JVM_START_KEYS = frozenset(
    {
        "spark.driver.memory",
        "spark.jars.packages",
        "spark.driver.extraJavaOptions",
        "spark.driver.extraClassPath",
    }
)


def submitted_conf() -> dict[str, str] | None:
    """The settings spark-submit gave this driver, or None when not run by spark-submit.

    spark-submit starts the JVM first and hands PySpark its gateway port; the JVM's
    system properties then hold --master, --conf, --driver-memory... Reading them needs
    the gateway, which only exists under spark-submit (elsewhere it would start a JVM
    before the session's settings are known)."""
    if "PYSPARK_GATEWAY_PORT" not in os.environ:
        return None
    # deferred: pyspark is slow to import (JVM-backed); only where Spark runs
    from pyspark import SparkConf, SparkContext

    SparkContext._ensure_initialized()
    return dict(SparkConf().getAll())


def build_session(cfg: Config, app_name: str, packages: tuple[str, ...] = ()) -> SparkSession:
    """A session from the config. Under spark-submit, what the command line set wins
    over the config's defaults (master, driver memory, any --conf).

    `packages`: Maven coordinates the session needs besides the configured ones."""
    timeline.mark(timeline.SESSION)
    if cfg.spark.use_connector:
        ensure_resolvable(cfg.spark.connector)

    if cfg.s3.configured:
        configure(cfg.s3)
    if cfg.spark.python_preload:  # pyspark compiled, not from Spark's zip
        prefer_installed_pyspark()

    # deferred: pyspark is slow to import (JVM-backed); only where Spark runs
    from pyspark.sql import SparkSession

    # PySpark started from Python takes its worker interpreter from this variable,
    # not from spark.pyspark.python: workers need this interpreter's packages.
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    # Local sessions stay on loopback unless the user says otherwise.
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    # deferred: pyspark is slow to import (JVM-backed); only where Spark runs
    from pyspark import SparkContext

    global _session_log
    submitted = submitted_conf()
    options = {"spark.app.name": app_name}
    log_file = None
    starts_jvm = submitted is None and SparkContext._gateway is None
    if submitted is None:
        options["spark.master"] = cfg.spark.master
        if starts_jvm:  # this session starts the JVM: it has a log file
            log_file = session_log_path(cfg, app_name).absolute()
            log_file.parent.mkdir(parents=True, exist_ok=True)
            _session_log = log_file
    for key, value in session_conf(cfg, packages, log_file).items():
        if submitted is not None and (key in submitted or key in JVM_START_KEYS):
            continue
        options[key] = value
    if starts_jvm and "spark.jars" in options and "spark.jars.packages" in options:
        options["spark.jars"] = launched_jars(options)
    builder = SparkSession.builder
    for key, value in options.items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    timeline.mark(timeline.CONTEXT)
    if submitted is not None:  # spark-submit started the JVM before this Python
        timeline.mark(timeline.JVM, jvm_start(spark))
    spark.sparkContext.setLogLevel(cfg.spark.log_level)
    if url := spark.sparkContext.uiWebUrl:
        # The address people look for; a timed job's is printed by evaluate from its log.
        print(f"{UI_LINE_PREFIX}{url}", file=sys.stderr, flush=True)
    return spark


def launched_jars(options: dict[str, str]) -> str:
    """Start this process's JVM with the session's settings and return the jars it got:
    the configured `spark.jars` and the ones spark-submit resolved from
    `spark.jars.packages`.

    PySpark starts the JVM by spark-submit with the settings as --conf, and spark-submit
    merges the packages' jars into `spark.jars`; then PySpark sets the same settings
    again on the new context, so a configured `spark.jars` (the project's jar) replaced
    that merged list. The driver still had the packages (spark-submit put them on its
    class path) but executors of a cluster fetched them as Python files only, never on
    their class path: Hudi's Kryo registrator ("ClassNotFoundException:
    org.apache.spark.HoodieSparkKryoRegistrar") and every other class of the packages
    were missing there. Local mode hid it: its executor is the driver."""
    # deferred: pyspark is slow to import (JVM-backed); only where Spark runs
    from pyspark import SparkConf, SparkContext

    conf = SparkConf(loadDefaults=False)
    for key, value in options.items():
        conf.set(key, value)
    SparkContext._ensure_initialized(conf=conf)
    jvm: Any = SparkContext._jvm
    merged = jvm.java.lang.System.getProperty("spark.jars")
    return str(merged) if merged else options["spark.jars"]


def cores_of(spark: SparkSession) -> int:
    return int(spark.sparkContext.defaultParallelism)


def granted_cores(spark: SparkSession) -> int:
    """The cores the application holds: its executors' (a cluster), or local[N]'s N.
    What a run's score divides by."""
    sc = spark.sparkContext
    if str(sc.master).startswith("local"):
        return int(sc.defaultParallelism)
    execs = sc._jsc.sc().statusStore().executorList(True)
    return sum(
        int(execs.apply(i).totalCores())
        for i in range(execs.size())
        if execs.apply(i).id() != "driver"
    )


@contextmanager
def spark_session(
    cfg: Config, app_name: str, packages: tuple[str, ...] = ()
) -> Iterator[SparkSession]:
    """A session for one command; stopped afterwards only if this command started it
    and no application keeps it (`kept_session`)."""
    # deferred: pyspark is slow to import (JVM-backed); only where Spark runs
    from pyspark.sql import SparkSession

    existing = _keeper.session or SparkSession.getActiveSession()
    spark = existing or build_session(cfg, app_name, packages)
    if existing is None and _keeper.keeping:
        _keeper.session = spark
    warming = warm_up.start(spark) if existing is None and cfg.spark.warm_up else None
    try:
        yield spark
    finally:
        if warming is not None:
            warming.join()
        if existing is None and not _keeper.keeping:
            if timeline.recording():  # a timed job: its tasks' times, from the JVM
                mark_tasks(spark)
            timeline.mark(timeline.STOP)
            stop_session(spark)
            timeline.mark(timeline.STOPPED)


def stop_session(spark: SparkSession) -> None:
    """`spark.stop()` without waiting for pyspark's accumulator server: its shutdown
    waits for the update handler's 1 s poll, then `serve_forever`'s 0.5 s one (0.4-0.9 s
    of every job's stop, against 0.05-0.07 s for the JVM's own stop: results/costs.md).
    Every update was acknowledged before the action that sent it returned, so nothing
    is lost: the server shuts down on a daemon thread of its own, which ends within a
    second, or with the process."""
    sc: Any = spark.sparkContext
    server = getattr(sc, "_accumulatorServer", None)
    if server is not None:
        sc._accumulatorServer = None  # stop() then leaves it to the thread
        threading.Thread(
            target=server.shutdown, name="accumulator-server-stop", daemon=True
        ).start()
    spark.stop()


def jvm_start(spark: SparkSession) -> float:
    """When the driver's JVM started (wall clock, seconds), as the JVM itself says."""
    jvm: Any = spark.sparkContext._jvm
    return int(jvm.java.lang.management.ManagementFactory.getRuntimeMXBean().getStartTime()) / 1e3


def task_span(spark: SparkSession) -> tuple[float, float] | None:
    """When the application's first task was launched and its last stage completed
    (wall clock, seconds), from Spark's own status store (kept with the UI off too);
    None before any stage ran."""
    sc: Any = spark.sparkContext
    no_quantiles = sc._gateway.new_array(sc._jvm.double, 0)  # Array[Double]: a Java array
    stages = sc._jsc.sc().statusStore().stageList(None, False, False, no_quantiles, None)
    first, last = None, None
    for i in range(stages.size()):
        stage = stages.apply(i)
        if stage.firstTaskLaunchedTime().isDefined():
            at = stage.firstTaskLaunchedTime().get().getTime() / 1e3
            first = at if first is None else min(first, at)
        if stage.completionTime().isDefined():
            at = stage.completionTime().get().getTime() / 1e3
            last = at if last is None else max(last, at)
    return (first, last) if first is not None and last is not None else None


def mark_tasks(spark: SparkSession) -> None:
    """The timeline's first and last task, read before the session stops. A session
    whose JVM is gone (the job failing) has none: its own error is the one to see."""
    try:
        span = task_span(spark)
    except Exception:  # py4j's errors of a dead gateway: a mark is never worth a failure
        return
    if span is not None:
        timeline.mark(timeline.FIRST_TASK, span[0])
        timeline.mark(timeline.LAST_TASK, span[1])
