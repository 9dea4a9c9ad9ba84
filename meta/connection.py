"""How the metadata layer reaches PostgreSQL: the connection settings and one way
to open a connection. Both layers use it; it knows nothing of where the settings came
from (the harness's configuration, or LakeSoul's own properties file).

A server that does not answer (a restart, a short outage) is retried with backoff for
`retry_s` seconds; after that the failure is one line naming the server.
"""

from __future__ import annotations

import random
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlparse

import psycopg2

from meta.errors import PgError


@dataclass(frozen=True)
class PgConnection:
    host: str
    port: int
    database: str
    username: str
    password: str = field(repr=False)
    retry_s: float = 30.0  # how long an unreachable server is retried

    @property
    def jdbc_url(self) -> str:
        return f"jdbc:postgresql://{self.host}:{self.port}/{self.database}?stringtype=unspecified"

    def dsn(self) -> dict[str, Any]:
        return {
            "host": self.host,
            "port": self.port,
            "dbname": self.database,
            "user": self.username,
            "password": self.password,
        }

    def describe(self) -> str:
        return f"postgresql://{self.username}@{self.host}:{self.port}/{self.database}"


def parse_jdbc_url(url: str) -> tuple[str, int, str]:
    """host, port, database of a `jdbc:postgresql://` or `postgresql://` URL."""
    raw = url[5:] if url.startswith("jdbc:") else url
    parsed = urlparse(raw)
    if parsed.scheme not in ("postgresql", "postgres") or not parsed.hostname:
        raise PgError(f"not a PostgreSQL URL: {url!r} (expected jdbc:postgresql://HOST:PORT/DB)")
    try:
        port = parsed.port or 5432
    except ValueError:
        raise PgError(f"PostgreSQL URL {url!r}: the port is not a number from 1 to 65535") from None
    database = parsed.path.lstrip("/")
    if not database:
        raise PgError(f"PostgreSQL URL names no database: {url!r}")
    return parsed.hostname, port, database


TRANSIENT = (psycopg2.OperationalError, psycopg2.InterfaceError)


def backoff(attempt: int) -> float:
    """Seconds to wait before retry `attempt` (1, 2, ...): doubling from 0.1 s, at most 2 s,
    with jitter so writers do not retry in lockstep."""
    return min(2.0, 0.1 * 2 ** (attempt - 1)) * random.uniform(0.5, 1.0)


def connect(conn: PgConnection, **kw: Any) -> Any:
    """A psycopg2 connection (the caller closes it), retried while the server does not
    answer, for `conn.retry_s` seconds."""
    deadline = time.monotonic() + conn.retry_s
    attempt = 0
    while True:
        try:
            return psycopg2.connect(**conn.dsn(), **{"connect_timeout": 5, **kw})
        except psycopg2.OperationalError as exc:
            attempt += 1
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else "no answer"
            if not _transient(exc):  # it answered, and said no: retrying cannot help
                raise PgError(refusal(conn, exc)) from None
            if time.monotonic() >= deadline:
                raise PgError(
                    f"cannot reach PostgreSQL at {conn.describe()} (tried for "
                    f"{conn.retry_s:g} s): {first}"
                ) from None
            time.sleep(backoff(attempt))


@contextmanager
def session(conn: PgConnection, **kw: Any) -> Iterator[Any]:
    """A connection from `connect` (so retried) that is closed when the block ends, however
    it ends. It neither commits nor rolls back: closing discards an open transaction, so a
    block that writes commits on its own, usually with psycopg2's `with pgc:` (commit on
    success, rollback on error; a transaction, not a close) or with autocommit. Hence the
    usual form `with session(conn) as pgc, pgc, pgc.cursor() as cur:`."""
    pgc = connect(conn, **kw)
    try:
        yield pgc
    finally:
        pgc.close()


def _transient(exc: psycopg2.OperationalError) -> bool:
    """Worth retrying: the server is down or starting, not refusing us for good."""
    text = str(exc).lower()
    permanent = (
        "password authentication failed",
        "does not exist",
        "no pg_hba.conf entry",
        "role ",
    )
    return not any(p in text for p in permanent)


def refusal(conn: PgConnection, exc: Exception) -> str:
    """One line for a server that answered and refused us (no retry helps)."""
    text = str(exc).strip()
    first = text.splitlines()[0] if text else type(exc).__name__
    if "authentication failed" in text.lower():
        return (
            f"PostgreSQL at {conn.describe()}: authentication failed for user "
            f"{conn.username!r}: check the password (LAKESOUL_PG_PASSWORD, pg.password)"
        )
    return f"PostgreSQL at {conn.describe()} refused the connection: {first}"


def check_reachable(conn: PgConnection) -> None:
    """Fail fast (no retries) when the server does not answer: before long work."""
    try:
        psycopg2.connect(**{**conn.dsn(), "connect_timeout": 5}).close()
    except psycopg2.OperationalError as exc:
        if not _transient(exc):
            raise PgError(refusal(conn, exc)) from None
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else "connection failed"
        raise PgError(f"cannot reach PostgreSQL at {conn.describe()}: {first}") from None
