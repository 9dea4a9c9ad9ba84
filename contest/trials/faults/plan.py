"""Which fault experiments run, and how many trials each."""

from __future__ import annotations

from dataclasses import dataclass

EXPERIMENTS = (
    "kill_write",
    "kill_merge",
    "kill_read",
    "pg_crash",
    "concurrent_writers",
    "disk_full",
    "overlapping_evaluate",
    "nested_tables",
    "user_folders",
    "evaluations_apart",
)


@dataclass(frozen=True)
class FaultPlan:
    write_kills: int = 20
    merge_kills: int = 20
    merge_commits: int = 500_000
    read_kills: int = 20
    pg_crashes: int = 2
    pg_unsafe_crashes: int = 1
    pg_port: int = 54390
    writer_rounds: int = 5
    create_rounds: int = 5
    disk_full_runs: int = 1
    evaluate_overlaps: int = 2
    nested_trials: int = 3
    user_folder_kills: int = 5
    apart_pairs: int = 2
    only: tuple[str, ...] = EXPERIMENTS
