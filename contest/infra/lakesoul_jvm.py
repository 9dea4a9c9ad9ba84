"""LakeSoul's own released JVM libraries in Spark: `lakesoul-io-java` 2.6.2 (NativeIOWriter,
NativeIOReader, merge operators; its Rust library inside) and `lakesoul-common` 2.6.2
(DBManager, the metadata client), loaded through spark.jars.packages, plus the project's
small executor-side helper (`jvm/`, built by ./build.sh).

Two things Spark's package loading alone does not do (README, "LakeSoul's JVM libraries"):
Spark 3.5 ships Arrow 12 and HikariCP 2.5, and LakeSoul needs Arrow 15 and HikariCP 4 whose
JDBC driver the system class loader sees, so those jars go ahead of Spark's on the class
path (`extraClassPath`, which exists only once the packages are resolved); and Ivy fetches
jffi's native jar but not its main jar, which comes from the local Maven repository.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from contest.config import Config, SparkConfig, override
from contest.errors import ConnectorError
from contest.infra import jarcache, maven, packages
from contest.infra.postgres import resolve_connection
from contest.infra.spark import driver_java_options
from meta.schema import write_lakesoul_properties

LAKESOUL_VERSION = "2.6.2"
# LakeSoul's own released libraries (lakesoul-io-java brings lakesoul-common), with
# jcasbin pinned (lakesoul-common's casbin adapter asks for "LATEST"), and the artifact the
# set must not pull in (it clashes with Spark's own).
PACKAGE_SET = "lakesoul"
COORDINATES = (f"com.dmetasoul:lakesoul-io-java:{LAKESOUL_VERSION}", "org.casbin:jcasbin:1.81.0")
EXCLUDES = ("org.apache.spark:spark-catalyst_2.12",)
# Resolved jars that must precede Spark's own on the driver's and executors' class path.
CLASSPATH_FIRST = (
    "org.apache.arrow:arrow-vector:15.0.2",
    "org.apache.arrow:arrow-memory-core:15.0.2",
    "org.apache.arrow:arrow-memory-netty:15.0.2",
    "org.apache.arrow:arrow-format:15.0.2",
    "org.apache.arrow:arrow-c-data:15.0.2",
    "com.zaxxer:HikariCP:4.0.3",
    "org.postgresql:postgresql:42.7.3",
    "com.google.flatbuffers:flatbuffers-java:23.5.26",
    "org.eclipse.collections:eclipse-collections:11.1.0",
    "org.eclipse.collections:eclipse-collections-api:11.1.0",
)
JFFI = maven.ARTIFACTS["jffi"].coordinate
HELPER_JAR = Path("jvm") / "target" / "contest-lakesoul-stock.jar"
PROPERTIES = "lakesoul-jvm.properties"
JDBC_DRIVER = "org.postgresql.Driver"
PARTITION_DESC = "-5"  # LakeSoul's partition_desc of a table without range partitions


def ivy_path(coordinate: str, home: Path | None = None, classifier: str = "") -> Path:
    jar = packages.ivy_jar(coordinate, home)
    return jar.with_name(jar.stem + (f"-{classifier}" if classifier else "") + ".jar")


def m2_path(coordinate: str, home: Path | None = None) -> Path:
    return maven.jar_path(coordinate, maven.repository(home))


def classpath(home: Path | None = None) -> list[Path]:
    """The jars that go first on the class path, in order."""
    jars = [ivy_path(c, home) for c in CLASSPATH_FIRST]
    jars.append(ivy_path(JFFI, home, "native"))
    jars.append(m2_path(JFFI, home))
    return jars


def helper_jar(spark: SparkConfig) -> Path:
    """The executor-side helper: `spark.stock_helper_jar`, or jvm/ of this checkout."""
    if spark.stock_helper_jar:
        return Path(spark.stock_helper_jar)
    return Path(__file__).resolve().parents[2] / HELPER_JAR


def fetch_jffi() -> Path:
    return maven.ensure("jffi")


def ensure(cfg: Config) -> None:
    """Everything the JVM needs is on this machine, whole (fetched now when it can be, a
    corrupt jar fetched again), or one line saying what is missing and how to get it."""
    ivy = packages.ivy_home(cfg)
    jars = classpath()[:-1]
    memo = jarcache.Memo(ivy)
    if packages.missing(COORDINATES, ivy) or any(jarcache.problem(p, memo) for p in jars):
        packages.fetch(COORDINATES, EXCLUDES, ivy)
    memo.save()
    fetch_jffi()
    absent = [f"{p} ({r})" for p in classpath() if (r := jarcache.problem(p, memo))]
    if absent:
        raise ConnectorError(
            f"LakeSoul {LAKESOUL_VERSION}: jars missing after resolution: {', '.join(absent)}; "
            f"run `contest packages fetch --name {PACKAGE_SET}`"
        )
    if not helper_jar(cfg.spark).is_file():
        raise ConnectorError(
            f"the lakesoul-stock helper jar {helper_jar(cfg.spark)} is not built: run ./build.sh"
        )


def properties_file(cfg: Config) -> Path:
    """LakeSoul's properties file (`lakesoul_home`) for the configured PostgreSQL, naming
    the plain PostgreSQL driver: lakesoul-common from Maven is not shaded (the connector's
    file, `.state/lakesoul.properties`, names the shaded one)."""
    path = (cfg.state_path / PROPERTIES).absolute()
    write_lakesoul_properties(path, resolve_connection(cfg))
    text = path.read_text().splitlines()
    path.write_text(
        "\n".join(
            f"lakesoul.pg.driver={JDBC_DRIVER}" if ln.startswith("lakesoul.pg.driver=") else ln
            for ln in text
        )
        + "\n"
    )
    return path


def java_options(props: Path) -> str:
    return f"-Dlakesoul_home={props}"


def session_config(cfg: Config) -> Config:
    """The config of a session started from Python (not by spark-submit) with LakeSoul's
    libraries: the settings spark-submit's command line would carry, as Spark settings."""
    ensure(cfg)
    props = properties_file(cfg)
    cp = ":".join(str(p) for p in classpath())
    conf = {
        "spark.jars.excludes": ",".join(EXCLUDES),
        "spark.jars": str(helper_jar(cfg.spark)),
        "spark.driver.extraClassPath": cp,
        "spark.executor.extraClassPath": cp,
        "spark.driver.extraJavaOptions": driver_java_options(cfg.spark, None, java_options(props)),
        "spark.executor.extraJavaOptions": java_options(props),
    }
    return override(cfg, {f"spark.conf.{k}": v for k, v in conf.items()})


def uses_stock(cfg: Config) -> bool:
    return "lakesoul-stock" in (cfg.write.engine, cfg.read.engine)


def submit_options(cfg: Config) -> tuple[list[str], str]:
    """spark-submit's options for a job that uses LakeSoul's libraries (packages must be on
    the command line under spark-submit), and its extra driver Java options."""
    if not uses_stock(cfg):
        return [], ""
    ensure(cfg)
    props = properties_file(cfg)
    cp = ":".join(str(p) for p in classpath())
    return [
        "--packages",
        ",".join(COORDINATES),
        "--exclude-packages",
        ",".join(EXCLUDES),
        "--jars",
        str(helper_jar(cfg.spark)),
        "--driver-class-path",
        cp,
        "--conf",
        f"spark.executor.extraClassPath={cp}",
        "--conf",
        f"spark.executor.extraJavaOptions={java_options(props)}",
    ], java_options(props)


def jlist(jvm: Any, items: list[Any]) -> Any:
    out = jvm.java.util.ArrayList()
    for item in items:
        out.add(item)
    return out


def jmap(jvm: Any, items: dict[str, str]) -> Any:
    out = jvm.java.util.HashMap()
    for key, value in items.items():
        out.put(key, value)
    return out
