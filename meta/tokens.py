"""Which files in a table's folder this project wrote, so that a clean-up deletes only
those (README, "Failures").

Each write (a batch's Spark job, a compaction, a micro-batch's pieces) registers its
token for the table before it writes a file, and every file it writes is named
`part-<token>...`; a commit of the table names the files it holds. A file is the
table's when a commit of the table names it or its name carries a token of the table:
orphans of killed or failed writes, and the files of rolled-back or compacted commits,
are; a file a user or another tool put in the folder is not, whatever its name.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from meta.connection import PgConnection, session

TOKEN_LEN = 8
PREFIX = "part-"


def token_of(name: str) -> str | None:
    """The write token a data file's base name carries, if it can carry one."""
    if not name.startswith(PREFIX) or len(name) < len(PREFIX) + TOKEN_LEN:
        return None
    return name[len(PREFIX) : len(PREFIX) + TOKEN_LEN]


def register_tokens(conn: PgConnection, table_id: str, tokens: Iterable[str], kind: str) -> None:
    """Record that writes with these tokens are about to create files in the table's
    folder; committed before the first file exists, so a kill leaves its files claimed."""
    rows = [(table_id, t, kind) for t in tokens]
    if any(len(t) != TOKEN_LEN for _, t, _ in rows):
        raise ValueError(f"a write token has {TOKEN_LEN} letters")
    if not rows:
        return
    with session(conn) as pgc, pgc, pgc.cursor() as cur:
        cur.executemany(
            "INSERT INTO contest_write_token (table_id, token, kind) VALUES (%s, %s, %s) "
            "ON CONFLICT DO NOTHING",
            rows,
        )


def release_tokens(conn: PgConnection, table_id: str, tokens: Iterable[str]) -> None:
    """Forget the tokens of a write whose files are all deleted (a refused micro-batch):
    nothing of theirs is left to clean up."""
    with session(conn) as pgc, pgc, pgc.cursor() as cur:
        cur.execute(
            "DELETE FROM contest_write_token WHERE table_id = %s AND token = ANY(%s::text[])",
            (table_id, list(tokens)),
        )


def _inner(uri: str) -> str:
    """A URI's path as a filesystem lists it (`file:///a` -> `/a`, `s3://b/k` -> `b/k`)."""
    return uri.split("://", 1)[1] if "://" in uri else uri


@dataclass(frozen=True)
class Ownership:
    """The table's tokens and every file any of its commits named (inner paths)."""

    tokens: frozenset[str]
    files: frozenset[str]

    def owns(self, path: str) -> bool:
        """Whether the file at `path` (a URI or an inner path) is the table's."""
        inner = _inner(path)
        if inner in self.files:
            return True
        token = token_of(inner.rsplit("/", 1)[-1])
        return token is not None and token in self.tokens


def ownership(conn: PgConnection, table_id: str) -> Ownership:
    with session(conn) as pgc, pgc, pgc.cursor() as cur:
        cur.execute("SELECT token FROM contest_write_token WHERE table_id = %s", (table_id,))
        tokens = frozenset(r[0] for r in cur.fetchall())
        cur.execute(
            "SELECT DISTINCT (f).path FROM data_commit_info d "
            "CROSS JOIN unnest(d.file_ops) AS f WHERE d.table_id = %s",
            (table_id,),
        )
        files = frozenset(_inner(r[0]) for r in cur.fetchall())
    return Ownership(tokens, files)
