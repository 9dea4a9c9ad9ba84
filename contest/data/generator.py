"""Contest-shaped data at any scale, deterministic, streamed in bounded memory.

By default (the `contest` workload) base-0 introduces its keys; each later batch is half
new keys and half updates of keys drawn uniformly from every earlier batch, shuffled
together. Scale 1 gives 30,000,000 rows and 20,000,000 distinct keys, like the contest's
files. A workload (`[workload]`, contest/data/workload.py) changes the shape: batches,
sizes, the update share and which keys updates hit, keys repeated inside a batch, NULLs,
extra columns. The default workload's files are byte-for-byte those of the generator
before workloads existed (tests/contest/data/test_workload_gen.py).
"""

from __future__ import annotations

import dataclasses
import functools
import math
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from tqdm import tqdm

from contest.config import WorkloadConfig
from contest.data import change_generator, operators
from contest.data.batches import SCHEMA, batch_rows
from contest.data.changes import DELETE
from contest.data.file_writers import FILE_WRITERS, FileWriter
from contest.data.workload import batch_schema, workload_schema
from contest.errors import DataError

CHUNK_ROWS = 1_000_000
# Rows per row group: a whole file up to scale 1 (one row group, as in the contest),
# bounded above so memory stays bounded at any scale.
MAX_ROW_GROUP_ROWS = 10_000_000
# Rows whose name is the literal string "null" (the default of workload.null_string_share).
NULL_NAME_SHARE = WorkloadConfig.null_string_share
SQL_NULL_SHARE = 0.02  # with --nulls (and workload.null_share 0): SQL NULLs per column
# Low-cardinality columns dictionary-encoded: ~90 bytes a row, as the contest files.
DICT_COLUMNS = ["hostname", "name", "city", "job"]

_FIRST = (
    "ava bo chen dai eli fei gus hana ivan jun kai lena mo nia oskar pia quinn rui "
    "sara tao uma vic wei xia yan zoe"
).split()
_LAST = (
    "li wang zhang liu chen yang zhao huang zhou wu xu sun hu zhu gao lin he guo ma luo "
    "smith jones brown lee kim"
).split()
_CITIES = (
    "beijing shanghai shenzhen hangzhou chengdu wuhan xian nanjing tianjin suzhou "
    "chongqing qingdao xiamen dalian harbin kunming lanzhou urumqi lhasa haikou"
).split()
_JOBS = (
    "engineer teacher doctor nurse driver chef clerk artist lawyer farmer pilot "
    "analyst designer manager writer"
).split()


@dataclass(frozen=True)
class GenReport:
    files: list[Path]
    rows: int
    distinct_keys: int
    seconds: float


def _splitmix64(x: np.ndarray) -> np.ndarray:
    """A bijection on uint64: distinct key indices give distinct uuids."""
    with np.errstate(over="ignore"):
        z = x + np.uint64(0x9E3779B97F4A7C15)
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        return z ^ (z >> np.uint64(31))


_HEX = np.array([f"{i:02x}".encode() for i in range(256)], dtype="S2")


def uuids(key_index: np.ndarray, seed: int) -> pa.Array:
    """Canonical 36-character version-4 UUID strings, one per key index."""
    idx = key_index.astype(np.uint64)
    with np.errstate(over="ignore"):
        hi = _splitmix64(idx ^ np.uint64(seed * 0x5851F42D4C957F2D & 0xFFFFFFFFFFFFFFFF))
        lo = _splitmix64(hi ^ np.uint64(0xD6E8FEB86659FD93))
    raw = np.empty((len(idx), 16), dtype=np.uint8)
    raw[:, :8] = hi.astype(">u8").view(np.uint8).reshape(-1, 8)
    raw[:, 8:] = lo.astype(">u8").view(np.uint8).reshape(-1, 8)
    raw[:, 6] = (raw[:, 6] & 0x0F) | 0x40  # version 4
    raw[:, 8] = (raw[:, 8] & 0x3F) | 0x80  # RFC 4122 variant
    hexed = _HEX[raw].view("S1").reshape(len(idx), 32)
    out = np.full((len(idx), 36), b"-", dtype="S1")
    for dst, src in (
        (slice(0, 8), slice(0, 8)),
        (slice(9, 13), slice(8, 12)),
        (slice(14, 18), slice(12, 16)),
        (slice(19, 23), slice(16, 20)),
        (slice(24, 36), slice(20, 32)),
    ):
        out[:, dst] = hexed[:, src]
    return pa.array(out.view("S36").ravel(), type=pa.binary()).cast(pa.string())


def _pool(words_a: list[str], words_b: list[str], sep: str) -> pa.Array:
    return pa.array([f"{a}{sep}{b}" for a in words_a for b in words_b], pa.string())


_NAMES = _pool(_FIRST, _LAST, " ")
_HOSTS = pa.array(
    [f"{w}-{n:03d}.{d}" for w in _JOBS for n in range(40) for d in ("lake.io", "soul.cn")],
    pa.string(),
)
_CITY = pa.array(_CITIES, pa.string())
_JOB = pa.array(_JOBS, pa.string())


def _with_nulls(arr: pa.Array, rng: np.random.Generator, share: float = SQL_NULL_SHARE) -> pa.Array:
    mask = pa.array(rng.random(len(arr)) < share)
    return pc.if_else(mask, pa.scalar(None, arr.type), arr)


def chunk_table(
    keys: np.ndarray,
    rng: np.random.Generator,
    seed: int,
    nulls: bool,
    workload: WorkloadConfig | None = None,
    extra_rng: np.random.Generator | None = None,
) -> pa.Table:
    """One chunk's rows for `keys`. The contest's columns come from `rng` in a fixed
    order (the default workload's bytes depend on it); extra columns from `extra_rng`."""
    w = workload or WorkloadConfig()
    null_share = w.null_share or (SQL_NULL_SHARE if nulls else 0.0)
    n = len(keys)
    octets = [
        pc.cast(pa.array(rng.integers(1, 255, n, dtype=np.int64)), pa.string()) for _ in range(4)
    ]
    ip = pc.binary_join_element_wise(*octets, ".")
    hostname = _HOSTS.take(pa.array(rng.integers(0, len(_HOSTS), n)))
    requests = pa.array(rng.integers(1, 1000, n, dtype=np.int64))
    names = _NAMES.take(pa.array(rng.integers(0, len(_NAMES), n)))
    name = pc.if_else(pa.array(rng.random(n) < w.null_string_share), "null", names)
    city = _CITY.take(pa.array(rng.integers(0, len(_CITY), n)))
    job = _JOB.take(pa.array(rng.integers(0, len(_JOB), n)))
    phonenum = pc.cast(
        pa.array(rng.integers(13_000_000_000, 19_999_999_999, n, dtype=np.int64)), pa.string()
    )
    cols = [uuids(keys, seed), ip, hostname, requests, name, city, job, phonenum]
    if null_share:
        cols = [cols[0]] + [_with_nulls(c, rng, null_share) for c in cols[1:]]
    if not w.columns:
        return pa.Table.from_arrays(cols, schema=SCHEMA)

    erng = extra_rng or np.random.Generator(np.random.PCG64([seed, n, 2]))
    for col, op in w.columns.items():
        arr = extra_column(col, op, n, erng, w.null_string_share)
        cols.append(_with_nulls(arr, erng, null_share) if null_share else arr)
    return pa.Table.from_arrays(cols, schema=workload_schema(w))


def extra_column(
    col: str, op: str, n: int, rng: np.random.Generator, null_string_share: float
) -> pa.Array:
    """An extra payload column, as its operator's registry entry says (`generated`):
    numbers 1..999, factors -1/1/2 (a product that stays small), names with "null"
    strings (the operator that skips them), or low-cardinality strings of a pool."""
    kind = operators.get(op).generated
    if kind == "numbers":
        return pa.array(rng.integers(1, 1000, n, dtype=np.int64))
    if kind == "factors":
        return pa.array(np.array([-1, 1, 1, 1, 2], dtype=np.int64)[rng.integers(0, 5, n)])
    if kind == "names":
        names = _NAMES.take(pa.array(rng.integers(0, len(_NAMES), n)))
        return pc.if_else(pa.array(rng.random(n) < null_string_share), "null", names)
    pool = pa.array([f"{col}-{i:03d}" for i in range(1000)], pa.string())
    return pool.take(pa.array(rng.integers(0, len(pool), n)))


@dataclass(frozen=True)
class KeyPlan:
    """How one batch's rows split: keys updated, new keys, keys repeated in the batch."""

    updates: int
    new: int
    repeats: int


def key_plan(batch: int, rows: int, w: WorkloadConfig) -> KeyPlan:
    """The split of a batch's rows (base-0 updates nothing). The contest's: rows // 2 new
    keys and the rest updates, so the floor below keeps its counts exactly."""
    repeats = math.floor(rows * w.repeat_share + 1e-9)
    updates = 0 if batch == 0 else rows - math.floor(rows * (1 - w.update_share) + 1e-9)
    repeats = min(repeats, rows - updates)
    if batch == 0 and repeats == rows:  # a repeat needs a key to repeat
        repeats -= 1
    return KeyPlan(updates, rows - updates - repeats, repeats)


def update_keys(
    n: int,
    batch: int,
    next_key: int,
    starts: list[int],
    rng: np.random.Generator,
    w: WorkloadConfig,
) -> np.ndarray:
    """`n` earlier keys a later batch updates: uniform over every earlier key; Zipf (the
    key of rank k with probability ~ 1/k^s, ranks in key order, so base-0's first keys are
    the hot ones); or uniform over the keys of the last `recent_batches` batches."""
    if w.distribution == "zipf":
        return (rng.zipf(w.zipf_exponent, n).astype(np.int64) - 1) % next_key
    low = starts[max(0, batch - w.recent_batches)] if w.distribution == "recent" else 0
    return rng.integers(low, next_key, n, dtype=np.int64)


def batch_keys(
    batch: int,
    rows: int,
    next_key: int,
    rng: np.random.Generator,
    workload: WorkloadConfig | None = None,
    starts: list[int] | None = None,
) -> np.ndarray:
    """Key indices of one batch in file order; new keys are next_key, next_key+1, ...
    `starts[b]` is batch b's first new key (for the `recent` distribution)."""
    w = workload or WorkloadConfig()
    plan = key_plan(batch, rows, w)
    keys = np.arange(next_key, next_key + plan.new, dtype=np.int64)
    if plan.updates:
        updates = update_keys(plan.updates, batch, next_key, starts or [0], rng, w)
        keys = np.concatenate([keys, updates])
    if plan.repeats:
        keys = np.concatenate([keys, keys[rng.integers(0, len(keys), plan.repeats)]])
    if plan.updates or plan.repeats:
        rng.shuffle(keys)
    return keys


def generate(
    out_dir: str | Path,
    scale: float,
    seed: int = 2022,
    nulls: bool = False,
    progress: bool | None = None,
    workload: WorkloadConfig | None = None,
) -> GenReport:
    """base-0.parquet .. base-<N-1>.parquet of a workload (default: the contest's) into
    `out_dir`; `nulls` puts SQL NULLs in when the workload has none."""
    w = workload or WorkloadConfig()
    if nulls and not w.null_share:
        w = dataclasses.replace(w, null_share=SQL_NULL_SHARE)
    dict_columns = DICT_COLUMNS + [
        c for c, op in w.columns.items() if operators.get(op).default_type == operators.STRING
    ]
    started = time.perf_counter()
    out = Path(out_dir)
    if out.exists() and not out.is_dir():
        raise DataError(f"--out {out}: a file, not a folder: give a folder for the batch files")
    out.mkdir(parents=True, exist_ok=True)
    sizes = batch_rows(scale, w)
    bar = tqdm(
        total=sum(sizes),
        desc="gen",
        unit="rows",
        unit_scale=True,
        disable=not (sys.stderr.isatty() if progress is None else progress),
    )
    files, next_key, starts = [], 0, []
    state = change_generator.ChangeState()
    for b, rows in enumerate(sizes):
        rng = np.random.Generator(np.random.PCG64([seed, b]))
        starts.append(next_key)
        keys = batch_keys(b, rows, next_key, rng, w, starts)
        path = out / f"base-{b}.parquet"
        file_writer = FILE_WRITERS[w.file_writer]
        if change_generator.is_change_shape(w):
            plan = change_generator.plan_batch(
                b,
                rows,
                next_key,
                keys,
                key_plan(b, rows, w).new,
                rng,
                w,
                state,
                functools.partial(
                    update_keys, batch=b, next_key=next_key, starts=starts, rng=rng, w=w
                ),
            )
            next_key += plan.new_keys
            write_change_batch(path, plan, seed, b, w, file_writer, dict_columns, bar)
            files.append(path)
            continue
        next_key += key_plan(b, rows, w).new
        tmp = path.with_suffix(".parquet.tmp")
        schema = batch_schema(w, b)
        small = [c for c in dict_columns if c in schema.names]
        with file_writer.open(tmp, schema, small) as writer:
            for start in range(0, rows, MAX_ROW_GROUP_ROWS):
                group_keys = keys[start : start + MAX_ROW_GROUP_ROWS]
                parts = []
                for c in range(0, len(group_keys), CHUNK_ROWS):
                    crng = np.random.Generator(np.random.PCG64([seed, b, start + c, 1]))
                    erng = np.random.Generator(np.random.PCG64([seed, b, start + c, 2]))
                    parts.append(
                        chunk_table(group_keys[c : c + CHUNK_ROWS], crng, seed, False, w, erng)
                    )
                    bar.set_postfix_str(f"base-{b}", refresh=False)
                    bar.update(len(parts[-1]))
                # Chunked (no copy): the writer streams it out as one row group.
                group = pa.concat_tables(parts)
                if w.added or w.widened:  # this batch's schema (schema evolution)
                    group = group.select(schema.names).cast(schema)
                del parts
                writer.write_table(group, row_group_size=file_writer.group_rows(len(group)))
                del group
        tmp.replace(path)
        files.append(path)
    bar.close()
    return GenReport(files, sum(sizes), next_key, time.perf_counter() - started)


def write_change_batch(
    path: Path,
    plan: change_generator.BatchPlan,
    seed: int,
    b: int,
    w: WorkloadConfig,
    file_writer: FileWriter,
    dict_columns: list[str],
    bar: tqdm,
) -> None:
    """A batch of change data (contest/data/change_generator.py): the key, the op column
    (the workload's), then the payload columns the batch holds, each chunk's values drawn
    as the upsert shape's are; a delete row's payload NULL."""
    key = SCHEMA.names[0]
    full = batch_schema(w, b)
    fields = [full.field(key)]
    if plan.ops is not None:
        fields.append(pa.field(w.op_column, pa.string()))
    fields += [full.field(c) for c in full.names if c in plan.columns]
    schema = pa.schema(fields)
    deleted = change_generator.op_value(w, DELETE) if plan.ops is not None else None
    tmp = path.with_suffix(".parquet.tmp")
    small = [c for c in dict_columns if c in schema.names]
    with file_writer.open(tmp, schema, small) as writer:
        for c in range(0, len(plan.keys), CHUNK_ROWS):
            crng = np.random.Generator(np.random.PCG64([seed, b, c, 1]))
            erng = np.random.Generator(np.random.PCG64([seed, b, c, 2]))
            part = chunk_table(plan.keys[c : c + CHUNK_ROWS], crng, seed, False, w, erng)
            cols = {key: part.column(key)}
            if plan.ops is not None:
                ops = pa.array(plan.ops[c : c + CHUNK_ROWS], pa.string())
                cols[w.op_column] = ops
                gone = pc.equal(ops, deleted)
            for col in plan.columns:
                arr = part.column(col)
                cols[col] = arr if plan.ops is None else pc.if_else(gone, None, arr)
            table = pa.table([cols[f.name] for f in schema], schema=schema)
            writer.write_table(table, row_group_size=file_writer.group_rows(len(table)))
            bar.update(len(table))
    tmp.replace(path)
