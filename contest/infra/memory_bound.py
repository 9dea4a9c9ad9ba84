"""The harness's bound on the memory of the processes it runs, and who is exempt from it.

Every process tree the harness runs (a job's JVM and Python workers together, the
oracle, the checker) stays under 8 GB of peak RSS at any scale: the machine is shared,
and what the contest measures must not need more. The oracle and the checker keep under
it by their own DuckDB budget (contest/data/oracle.py, MAX_MEMORY_LIMIT).

A reference run as users run it is exempt, by name, here and nowhere else: held to the
bound it would be another program than the one users have (DuckDB capped at 4 GiB spills
where at its default of 80% of the memory it does not).
"""

from __future__ import annotations

from types import MappingProxyType

PROCESS_TREE_BOUND_BYTES = 8_000_000_000

# The processes exempt from the bound, by the name a benchmark records them under, each
# with why.
EXEMPT = MappingProxyType(
    {
        "duckdb": "the DuckDB reference runs at DuckDB's defaults, as users run it "
        "(its memory limit 80% of the machine's memory)",
    }
)


def bound_for(name: str) -> int | None:
    """The peak process-tree memory `name` is held to (bytes); None when exempt."""
    return None if name in EXEMPT else PROCESS_TREE_BOUND_BYTES


def over_bound(name: str, peak_tree_bytes: int | None) -> bool:
    """Whether a measured peak is over the bound that holds `name` (never when exempt)."""
    bound = bound_for(name)
    return bound is not None and peak_tree_bytes is not None and peak_tree_bytes > bound
