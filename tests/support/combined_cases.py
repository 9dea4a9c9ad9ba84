"""All contract cases in one data folder, for end-to-end runs that cost a process
start each (the peer formats): each case's keys get the case's name as prefix, and its
batches are laid out in version order (a case with its own versions becomes the same
rows in files whose index is their version), so every case keeps its expected rows."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from contest.data.batches import SCHEMA
from tests.support.contract_cases import CASES


def _prefixed(rows: list[dict], prefix: str) -> list[dict]:
    return [{**r, "uuid": f"{prefix}/{r['uuid']}"} for r in rows]


def write_combined(folder: Path) -> list[dict]:
    """Write base-K.parquet holding every case; return the expected rows, by uuid."""
    files: list[list[dict]] = []
    expected: list[dict] = []
    for name, case in CASES.items():
        versions = case.get("versions") or {i: i for i in range(len(case["batches"]))}
        in_order = [case["batches"][i] for i in sorted(versions, key=lambda i: versions[i])]
        for k, rows in enumerate(in_order):
            while len(files) <= k:
                files.append([])
            files[k].extend(_prefixed(rows, name))
        expected.extend(_prefixed(case["expected"], name))
    folder.mkdir(parents=True, exist_ok=True)
    for k, rows in enumerate(files):
        pq.write_table(
            pa.Table.from_pylist(rows, schema=SCHEMA),
            folder / f"base-{k}.parquet",
            compression="NONE",
        )
    return sorted(expected, key=lambda r: r["uuid"])
