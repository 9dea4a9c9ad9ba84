"""TPC-H's `lineitem` as a user's change stream (the walk-through, docs/guides/tpch.md):
the table `tpchgen-cli` writes (a composite key, integers, decimals, dates, strings),
then change batches made from it as a CDC pipeline delivers them.

- base-0: every line, Debezium's snapshot kind `r`.
- base-1..N: updates of some live lines (`u`: the key and the quantity, price and status
  columns only, a new quantity, the price following it at the line's unit price, the
  status shipped), then deletes of some whole live orders (`d`: every line of each
  order, as TPC-H's refresh function RF2 deletes orders; the other columns NULL).

The batches are pure functions of the lineitem table and a seeded generator; the files
(tpchgen-cli's run, the batches written) are the module's last part."""

from __future__ import annotations

import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from contest.errors import DataError

# lineitem's key, the columns an update carries, and the op column (Debezium's kinds).
KEY = ("l_orderkey", "l_linenumber")
UPDATED = ("l_quantity", "l_extendedprice", "l_linestatus")
OP = "op"
SNAPSHOT, UPDATE, DELETE = "r", "u", "d"
SHIPPED = "F"


@dataclass(frozen=True)
class ChangeShape:
    """How many change batches, and each one's share of the live lines updated and of
    the live orders deleted."""

    batches: int = 10
    update_share: float = 0.05
    delete_share: float = 0.01
    seed: int = 2022


def snapshot(lineitem: pa.Table) -> pa.Table:
    """base-0: the table as it is, every row a snapshot read (`r`), the key first."""
    rest = [c for c in lineitem.column_names if c not in KEY]
    table = lineitem.select([*KEY, *rest])
    return table.add_column(len(KEY), OP, pa.array([SNAPSHOT] * table.num_rows, pa.string()))


def change_batches(lineitem: pa.Table, shape: ChangeShape) -> Iterator[pa.Table]:
    """base-1..N, in order. A line is live until its order is deleted; each batch
    updates `update_share` of the live lines (at least one) and deletes
    `delete_share` of the live orders (at least one while any is left)."""
    rng = np.random.default_rng(shape.seed)
    orders = lineitem.column(KEY[0]).to_numpy()
    live = np.ones(lineitem.num_rows, dtype=bool)
    quantity = lineitem.column(UPDATED[0])
    price = lineitem.column(UPDATED[1])
    for _ in range(shape.batches):
        alive = np.flatnonzero(live)
        n = max(1, round(len(alive) * shape.update_share)) if len(alive) else 0
        picked = np.sort(rng.choice(alive, size=n, replace=False))
        updates = _updates(lineitem, picked, quantity, price, rng)
        live_orders = np.unique(orders[live])
        k = max(1, round(len(live_orders) * shape.delete_share)) if len(live_orders) else 0
        gone = np.sort(rng.choice(live_orders, size=k, replace=False))
        lines = np.flatnonzero(live & np.isin(orders, gone))
        live[lines] = False
        yield pa.concat_tables([updates, _deletes(lineitem, lines, updates.schema)])


def _updates(
    lineitem: pa.Table, rows: np.ndarray, quantity, price, rng: np.random.Generator
) -> pa.Table:
    """The picked lines' new quantity (1-50), their price at the line's unit price
    (rounded to the cent), their status shipped."""
    take = pa.array(rows, pa.int64())
    old_q = _cents(pc.take(quantity, take))
    old_p = _cents(pc.take(price, take))
    new_q = rng.integers(1, 51, len(rows)) * 100
    new_p = (old_p * new_q + old_q // 2) // np.maximum(old_q, 1)
    table = pa.table({k: pc.take(lineitem.column(k), take) for k in KEY})
    table = table.append_column(OP, pa.array([UPDATE] * len(rows), pa.string()))
    table = table.append_column(UPDATED[0], _decimal(new_q, quantity.type))
    table = table.append_column(UPDATED[1], _decimal(new_p, price.type))
    status = lineitem.schema.field(UPDATED[2]).type
    return table.append_column(UPDATED[2], pa.array([SHIPPED] * len(rows), status))


def _deletes(lineitem: pa.Table, rows: np.ndarray, schema: pa.Schema) -> pa.Table:
    """Delete rows of the given lines: the key, `d`, the update columns NULL."""
    take = pa.array(rows, pa.int64())
    cols = {k: pc.take(lineitem.column(k), take) for k in KEY}
    cols[OP] = pa.array([DELETE] * len(rows), pa.string())
    for name in UPDATED:
        cols[name] = pa.nulls(len(rows), schema.field(name).type)
    return pa.table(cols, schema=schema)


def _cents(values) -> np.ndarray:
    """A decimal column of scale 2 as integer hundredths (exact)."""
    return np.array([int(v.scaleb(2)) for v in values.to_pylist()], dtype=np.int64)


def _decimal(cents: np.ndarray, typ: pa.DataType) -> pa.Array:
    return pa.array([Decimal(int(c)).scaleb(-2) for c in cents], pa.decimal128(15, 2)).cast(typ)


# -- the files (I/O at the edge) --------------------------------------------------------

# The generator's program, from its PyPI package (pinned in pyproject.toml).
GENERATOR = "tpchgen-cli"


def generate_lineitem(folder: Path, scale_factor: float) -> pa.Table:
    """lineitem at `scale_factor`, generated by tpchgen-cli into `folder` (a new folder
    of the caller's, removed after), its strings as plain strings."""
    program = Path(sys.executable).parent / GENERATOR
    if not program.exists():
        found = shutil.which(GENERATOR)
        if found is None:
            raise DataError(f"{GENERATOR}: not installed (./build.sh setup installs it)")
        program = Path(found)
    folder.mkdir(parents=True)
    try:
        done = subprocess.run(
            [
                str(program),
                "parquet",
                "--scale-factor",
                str(scale_factor),
                "--tables",
                "lineitem",
                "--output-dir",
                str(folder),
                "--no-progress",
            ],
            capture_output=True,
            text=True,
            check=False,
        )
        if done.returncode != 0:
            last = (done.stderr.strip().splitlines() or ["(no output)"])[-1]
            raise DataError(f"{GENERATOR} failed (exit {done.returncode}): {last}")
        files = sorted(folder.rglob("*.parquet"))
        if not files:
            raise DataError(f"{GENERATOR} wrote no parquet file into {folder}")
        table = pa.concat_tables(pq.read_table(f) for f in files)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    return table.cast(pa.schema([_plain(f) for f in table.schema])).replace_schema_metadata(None)


def _plain(f: pa.Field) -> pa.Field:
    """A column as a change file has it: nullable (a delete row leaves the payload
    NULL), without the generator's field ids, a string view as a plain string (every
    engine here reads those)."""
    return pa.field(f.name, pa.string() if f.type == pa.string_view() else f.type)


def write_dataset(folder: Path, lineitem: pa.Table, shape: ChangeShape) -> list[Path]:
    """base-0 (the snapshot) and base-1..N (the changes) into `folder`."""
    paths = [folder / "base-0.parquet"]
    pq.write_table(snapshot(lineitem), paths[0])
    for i, batch in enumerate(change_batches(lineitem, shape), 1):
        paths.append(folder / f"base-{i}.parquet")
        pq.write_table(batch, paths[-1])
    return paths
