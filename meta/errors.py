"""The root of every failure a user can cause or meet, with the exit code it ends in.

It lives in `meta`, the lowest layer, so the metadata layer and the harness above it
raise one family of errors, and the command line maps them to exit codes in one place
(`contest.cli`). A failure that is not one of these is a bug and keeps its traceback.
"""

from __future__ import annotations

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2


class HarnessError(Exception):
    """An expected failure: one line for the user, and the process's exit code."""

    exit_code = EXIT_FAILED


class UsageError(HarnessError):
    """Bad input: a flag, a name, a file or a value the user can correct."""

    exit_code = EXIT_USAGE


class MetaError(HarnessError):
    """LakeSoul's metadata cannot be used as asked (PostgreSQL, a commit, a snapshot)."""


class TableError(UsageError):
    """A table that cannot be used as asked (unknown, taken, bad name); names it."""


class CommitError(MetaError):
    """A commit that cannot land (table gone, version already committed, conflicts)."""


class ReplayError(MetaError):
    """A history the replay rules cannot order (e.g. a reset commit without a version)."""


class PgError(MetaError):
    """PostgreSQL cannot be used; the message says what to do."""
