"""LakeSoul's metadata schema in PostgreSQL, and LakeSoul's own properties file.

The schema files live in the repository's `sql/` folder and are shipped inside the
package as `meta.sql` (pyproject maps the folder), so an installed package finds them
with importlib.resources, wherever it runs.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

import psycopg2
from psycopg2 import sql

from meta.connection import PgConnection, session

SCHEMA_FILES = ("lakesoul_meta.sql", "contest_meta.sql")
SCHEMA_LOCK = 726354  # advisory lock: one schema writer at a time
# The JDBC driver class LakeSoul's JVM libraries load (they shade PostgreSQL's driver).
LAKESOUL_PG_DRIVER = "com.lakesoul.shaded.org.postgresql.Driver"


def schema_sql(name: str) -> str:
    """The text of one schema file shipped with the package."""
    return resources.files("meta.sql").joinpath(name).read_text()


def create_database(conn: PgConnection) -> None:
    """Create the configured database on the server if it is missing."""
    # Not `session`: the server's own database, and no retry (as before).
    pgc = psycopg2.connect(**dict(conn.dsn(), dbname="postgres"))
    try:
        pgc.autocommit = True  # CREATE DATABASE refuses to run in a transaction
        with pgc.cursor() as cur:
            cur.execute("SELECT 1 FROM pg_database WHERE datname = %s", (conn.database,))
            if cur.fetchone() is None:
                # Identifiers cannot be parameters: quote the configured name.
                cur.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(conn.database)))
    finally:
        pgc.close()


def apply_schema(conn: PgConnection) -> None:
    """Create LakeSoul's metadata tables and the project's own, if missing."""
    with session(conn) as pgc, pgc, pgc.cursor() as cur:
        cur.execute("SELECT pg_advisory_xact_lock(%s)", (SCHEMA_LOCK,))
        for name in SCHEMA_FILES:
            cur.execute(schema_sql(name))


def write_lakesoul_properties(path: Path, conn: PgConnection) -> None:
    """The file LakeSoul's JVM libraries read through the `lakesoul_home` variable."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.touch(mode=0o600)
    path.chmod(0o600)
    path.write_text(
        f"lakesoul.pg.driver={LAKESOUL_PG_DRIVER}\n"
        f"lakesoul.pg.url={conn.jdbc_url}\n"
        f"lakesoul.pg.username={conn.username}\n"
        f"lakesoul.pg.password={conn.password}\n"
    )


def read_lakesoul_properties(path: Path) -> dict[str, str]:
    """`lakesoul.pg.url`, `.username`, `.password` of a LakeSoul properties file
    (Java properties: `key=value` or `key: value`, `#`/`!` comments)."""
    out: dict[str, str] = {}
    for raw in path.read_text().splitlines():
        line = raw.strip()
        if not line or line[0] in "#!":
            continue
        sep = min((i for i in (line.find("="), line.find(":")) if i >= 0), default=-1)
        if sep < 0:
            continue
        out[line[:sep].strip()] = line[sep + 1 :].strip()
    return out
