"""A user's own files through `contest stream run --data DIR --workload FILE`: the
hand-made composite-key folder (tests/support/own_data.py: Debezium's kinds, files of
some of the columns, names whose natural order is not their text order) streamed into
the harness's LakeSoul table, five files a micro-batch (workload.files_per_batch), and
in the order of a log position column (workload.order_column); each read exact by the
oracle and equal to the result written by hand. Bad input: one line, a non-zero exit,
no table made, nothing written into the folder."""

from __future__ import annotations

import os
import tomllib
import uuid
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from contest import api
from contest.cli.main import main
from contest.config import Config, override
from contest.data.batches import discover
from contest.data.changes import changes_of
from contest.data.oracle import expected_rows
from contest.data.workload import contract_operators, schema_of_batch
from contest.errors import ConfigError, DataError
from contest.stream.ordering import order_files
from contest.stream.run import files_per_trigger
from meta import catalog
from meta.stream import batches as recorded_batches
from tests.support.config import cli
from tests.support.own_data import EXPECTED, write_own_data


def _described(folder: Path, wl: Path) -> None:
    assert main(["dataset", "describe", str(folder), "--out", str(wl)]) == 0


def _landed_in_order(paths: list[Path]) -> None:
    """Modification times in the given order (Spark's file source takes files by them)."""
    for i, path in enumerate(paths):
        os.utime(path, (1_700_000_000 + i, 1_700_000_000 + i))


def _workload(cfg: Config, wl: Path, **more: object) -> Config:
    settings = tomllib.loads(wl.read_text())["workload"]
    values = {f"workload.{k}": v for k, v in {**settings, **more}.items()}
    return override(cfg, values)


def _stream(cfg: Config, tmp_path: Path, name: str, data: Path, wl: Path, *sets: str) -> int:
    args = cli(cfg, *sets, "stream", "run", "--table", str(tmp_path / name), "--data", str(data))
    checkpoint = str(tmp_path / "checkpoint")
    return main(
        [*args, "--workload", str(wl), "--trigger", "available-now", "--checkpoint", checkpoint]
    )


def _read(cfg: Config, name: str) -> list[dict]:
    rows = api.open_table(name, cfg).read_arrow().to_pylist()
    return sorted(rows, key=lambda r: (r["tenant"], r["item_id"]))


def _oracle(cfg: Config, data: Path) -> list[dict]:
    found = discover(data, None, schema_of_batch(cfg.workload))
    rows = expected_rows(found, contract_operators(cfg.workload), changes_of(cfg))
    return sorted((dict(r) for r in rows), key=lambda r: (r["tenant"], r["item_id"]))


def _listing(folder: Path) -> list[tuple[str, int, int]]:
    return sorted((p.name, p.stat().st_size, p.stat().st_mtime_ns) for p in folder.iterdir())


@pytest.mark.spark
@pytest.mark.pg
def test_your_files_stream_five_a_micro_batch_in_natural_name_order(
    spark, pg, cfg, tmp_path, capsys
):
    data = write_own_data(tmp_path / "data")
    wl = tmp_path / "mine.toml"
    _described(data, wl)
    _landed_in_order([data / f"part-{i}.parquet" for i in range(1, 13)])
    before = _listing(data)
    name = f"own_{uuid.uuid4().hex[:8]}"
    code = _stream(cfg, tmp_path, name, data, wl, "--set", "workload.files_per_batch=5")
    err = capsys.readouterr().err
    assert code == 0, err[-3000:]
    scfg = _workload(cfg, wl)
    table = catalog.get_table(pg, name)
    # part-1..5, part-6..10, part-11..12: part-10 applied after part-6..9 (its text
    # sorts before theirs), and part-11 accepted after it.
    assert [[Path(f).name for f in b.source_files] for b in recorded_batches(pg, table)] == [
        [f"part-{i}.parquet" for i in range(1, 6)],
        [f"part-{i}.parquet" for i in range(6, 11)],
        ["part-11.parquet", "part-12.parquet"],
    ]
    got = _read(scfg, name)
    assert got == _oracle(scfg, data) == EXPECTED
    assert _listing(data) == before  # only read


def _log_named(folder: Path) -> Path:
    """The folder's files with a log position (`lsn`, rising file by file) under names
    whose order is the reverse of the log's; each file's rows reversed, the log column
    putting them back."""
    write_own_data(folder)
    for i in range(1, 13):
        part = folder / f"part-{i}.parquet"
        table = pq.read_table(part)
        lsn = pa.array([100 * (i - 1) + j for j in range(table.num_rows)], pa.int64())
        table = table.append_column("lsn", lsn)
        pq.write_table(
            table.take(list(range(table.num_rows))[::-1]), folder / f"c-{13 - i}.parquet"
        )
        part.unlink()
    return folder


@pytest.mark.spark
@pytest.mark.pg
def test_your_files_stream_in_the_order_of_a_log_position(spark, pg, cfg, tmp_path, capsys):
    data = _log_named(tmp_path / "data")
    wl = tmp_path / "mine.toml"
    _described(data, wl)
    before = _listing(data)
    name = f"own_{uuid.uuid4().hex[:8]}"
    code = _stream(cfg, tmp_path, name, data, wl, "--set", "workload.order_column=lsn")
    err = capsys.readouterr().err
    assert code == 0, err[-3000:]
    scfg = _workload(cfg, wl, order_column="lsn")
    table = catalog.get_table(pg, name)
    [batch] = recorded_batches(pg, table)
    assert [Path(f).name for f in batch.source_files] == [
        f"c-{i}.parquet" for i in range(12, 0, -1)
    ]
    got = [{k: v for k, v in r.items() if k != "lsn"} for r in _read(scfg, name)]
    assert got == EXPECTED
    assert _listing(data) == before
    # The sorted copies the sink wrote are gone once the micro-batch committed.
    assert not list((Path(cfg.work_dir) / "stream" / "ordered").glob("*"))


def _refused(cfg: Config, tmp_path: Path, capsys, data: Path, wl: Path, says: str, *sets: str):
    before = _listing(data)
    name = f"own_{uuid.uuid4().hex[:8]}"
    code = _stream(cfg, tmp_path, name, data, wl, *sets)
    err = capsys.readouterr().err.strip().splitlines()
    assert code != 0
    assert says in err[-1], err[-5:]
    assert _listing(data) == before
    assert not (tmp_path / name).exists() and not (tmp_path / "checkpoint").exists()


@pytest.mark.pg
def test_a_null_key_in_your_stream_is_refused_before_the_query(cfg, pg, tmp_path, capsys):
    data = write_own_data(tmp_path / "data")
    wl = tmp_path / "mine.toml"
    _described(data, wl)
    bad = pa.table(
        {"tenant": pa.array([None], pa.string()), "item_id": [5], "op": ["c"], "qty": [1]}
    )
    pq.write_table(bad, data / "part-13.parquet")
    _refused(cfg, tmp_path, capsys, data, wl, "part-13.parquet: 1 row(s) with a NULL key")


@pytest.mark.pg
def test_overlapping_log_ranges_in_your_stream_are_refused(cfg, pg, tmp_path, capsys):
    data = _log_named(tmp_path / "data")
    wl = tmp_path / "mine.toml"
    _described(data, wl)
    late = pa.table(
        {"tenant": ["a", "a"], "item_id": [1, 1], "op": ["u", "u"], "qty": [9, 8], "lsn": [50, 250]}
    )
    pq.write_table(late, data / "c-13.parquet")  # spans the second and third files
    says = "c-11.parquet: its lsn range [100, 100] overlaps c-13.parquet's [50, 250]"
    _refused(cfg, tmp_path, capsys, data, wl, says, "--set", "workload.order_column=lsn")


def test_files_per_batch_sizes_a_stream_micro_batch(cfg):
    assert files_per_trigger(cfg) == 0  # every file that landed
    grouped = override(cfg, {"workload.files_per_batch": 5})
    assert files_per_trigger(grouped) == 5
    assert files_per_trigger(override(grouped, {"stream.max_files_per_trigger": 5})) == 5
    with pytest.raises(ConfigError, match="give one"):
        files_per_trigger(override(grouped, {"stream.max_files_per_trigger": 2}))


def test_a_micro_batch_beginning_before_the_last_committed_range_is_refused(tmp_path):
    def part(name: str, lsns: list[int]) -> str:
        path = tmp_path / name
        pq.write_table(pa.table({"lsn": pa.array(lsns, pa.int64())}), path)
        return str(path)

    a, b, c = part("a.parquet", [1, 5]), part("b.parquet", [6, 9]), part("c.parquet", [10, 12])
    assert order_files([c, b], "lsn", [a]) == [b, c]  # by range, after a
    with pytest.raises(DataError, match=r"b\.parquet: its lsn range begins at 6, before c"):
        order_files([b], "lsn", [a, c])
