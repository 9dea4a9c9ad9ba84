"""Direct statements against the test PostgreSQL, for tests that set up a state the
harness itself never makes (a lost commit row, a foreign snapshot)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from meta.connection import PgConnection, connect


@contextmanager
def pg_cursor(conn: PgConnection) -> Iterator[Any]:
    """A cursor in its own transaction, committed when the block ends."""
    pgc = connect(conn)
    try:
        with pgc, pgc.cursor() as cur:
            yield cur
    finally:
        pgc.close()
