"""Streaming upserts against real Spark (Structured Streaming), PostgreSQL and the oracle:
a restart consumes every file once, a replayed batch id is not committed again, a new
checkpoint over a consumed folder is refused, and reads during the stream see whole
micro-batches."""

from __future__ import annotations

import dataclasses
import threading
import time
import uuid
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from contest import api
from contest.config import Config, override
from contest.data.oracle import expected_rows
from contest.errors import HarnessError
from contest.stream.feed import feed, feed_table
from contest.stream.run import consumed_batches, is_idle, run_stream
from meta import catalog
from meta.stream import batches
from tests.support.pipeline import stream_config as stream_cfg

ROWS = 400


def table_rows(cfg: Config, name: str) -> list[dict]:
    return api.open_table(name, cfg).read_arrow().to_pylist()


def requests_total(paths) -> int:
    return sum(pq.read_table(p, columns=["requests"]).column(0).to_numpy().sum() for p in paths)


def test_feed_is_deterministic_atomic_and_numbers_on(tmp_path):
    a = feed(tmp_path / "a", 3, ROWS, 0)
    b = feed(tmp_path / "b", 2, ROWS, 0)
    feed(tmp_path / "b", 1, ROWS, 0)
    names = sorted(p.name for p in (tmp_path / "b").iterdir())
    assert names == [p.name for p in a.files] == [f"feed-{i:06d}.parquet" for i in range(3)]
    for p in a.files:
        assert p.read_bytes() == (tmp_path / "b" / p.name).read_bytes()
    # Later files update keys of earlier ones, and bring new keys.
    first = set(feed_table(0, ROWS).column("uuid").to_pylist())
    second = feed_table(1, ROWS).column("uuid").to_pylist()
    assert 0 < sum(k in first for k in second) < len(second)
    assert b.rows == 2 * ROWS


def test_the_idle_clock_starts_when_the_query_is_up():
    # A query still starting (a loaded machine, a cluster) is never idle, however long.
    assert not is_idle(1000.0, 0.0, None, 5.0)
    # Up at 100 s, no micro-batch yet: idle 5 s after it came up, not after t0.
    assert not is_idle(104.0, 0.0, 100.0, 5.0)
    assert is_idle(105.0, 0.0, 100.0, 5.0)
    # The last micro-batch later than the start moves the clock.
    assert not is_idle(110.0, 107.0, 100.0, 5.0)
    assert is_idle(112.5, 107.0, 100.0, 5.0)
    # 0 = never stop for idleness.
    assert not is_idle(1e9, 0.0, 0.0, 0.0)


def test_restart_then_replay_then_new_checkpoint(spark, pg, cfg, tmp_path):
    name = f"stream_{uuid.uuid4().hex[:8]}"
    root = tmp_path / name
    scfg = stream_cfg(cfg, root, max_files_per_trigger=2)
    table_path = str(root / "table")
    feed(root / "incoming", 3, ROWS, 0)
    first = run_stream(spark, pg, scfg, table_path, name, say=lambda _m: None)
    assert first.files == 3 and len(first.committed) == 2  # 2 files, then 1
    table = catalog.get_table(pg, name)
    assert table_rows(scfg, name) == expected_rows(consumed_batches(pg, table))

    # A restart on the same checkpoint reads only the new files.
    fed = feed(root / "incoming", 2, ROWS, 0)
    second = run_stream(spark, pg, scfg, table_path, name, say=lambda _m: None)
    assert second.query_id == first.query_id and second.run_id != first.run_id
    assert second.files == 2 and second.replayed == []
    recorded = batches(pg, table)
    sources = [f for b in recorded for f in b.source_files]
    all_files = sorted(str(p) for p in (root / "incoming").glob("feed-*.parquet"))
    assert sorted(sources) == all_files and len(set(sources)) == len(sources)
    assert [b.version for b in recorded] == list(range(len(recorded)))
    expected = expected_rows(consumed_batches(pg, table))
    assert table_rows(scfg, name) == expected
    assert sum(r["requests"] for r in expected) == requests_total(all_files)
    assert fed.files[-1].name == "feed-000004.parquet"

    # The replay: the checkpoint loses its last commit-log entry, as after a crash
    # between the table's commit and Spark's; Spark runs that batch again.
    commits = root / "checkpoint" / "commits"
    last = max(int(p.name) for p in commits.iterdir() if p.name.isdigit())
    (commits / str(last)).unlink()
    (commits / f".{last}.crc").unlink(missing_ok=True)
    third = run_stream(spark, pg, scfg, table_path, name, say=lambda _m: None)
    assert third.replayed == [last] and third.committed == []
    assert third.query_id == first.query_id
    assert batches(pg, table) == recorded  # nothing committed twice
    assert table_rows(scfg, name) == expected  # requests sums not doubled

    # A new checkpoint over the same folder would read every file again: refused.
    other = dataclasses.replace(
        scfg, stream=dataclasses.replace(scfg.stream, checkpoint=str(root / "other"))
    )
    tokens = _tokens(pg, table)
    with pytest.raises(HarnessError, match="was committed to .* by batch"):
        run_stream(spark, pg, other, table_path, name, say=lambda _m: None)
    assert batches(pg, table) == recorded
    assert _tokens(pg, table) == tokens  # the refused batch's write tokens are released
    assert table_rows(scfg, name) == expected
    _check_on_the_command_line(cfg, root, name, recorded)


def _check_on_the_command_line(cfg: Config, root: Path, name: str, recorded) -> None:
    """`contest check` of a streamed table's read (it said `no batch files` of a feed
    folder): against its feed folder, against what its micro-batches consumed, and a
    read as of a micro-batch version against the micro-batches up to it."""
    from contest.cli.main import main
    from tests.support.config import cli

    incoming, whole, early = root / "incoming", root / "whole", root / "early"
    assert main(cli(cfg, "read", "--table", name, "--out", str(whole))) == 0
    assert main(cli(cfg, "check", "--result", str(whole), "--data", str(incoming))) == 0
    assert main(cli(cfg, "check", "--result", str(whole), "--stream-table", name)) == 0
    first = recorded[0].version
    as_of = ["--as-of-version", str(first)]
    assert main(cli(cfg, "read", "--table", name, "--out", str(early), *as_of)) == 0
    by_stream = ["--stream-table", name, "--upto-version", str(first)]
    assert main(cli(cfg, "check", "--result", str(early), *by_stream)) == 0
    # The whole table is not the early read: the check says so.
    assert main(cli(cfg, "check", "--result", str(early), "--stream-table", name)) == 1
    # Files 0 and 1 were the first micro-batch: as of the data's version 1.
    upto = ["--data", str(incoming), "--upto-version", "1"]
    assert main(cli(cfg, "check", "--result", str(early), *upto)) == 0


def test_reads_during_the_stream_see_whole_micro_batches(spark, pg, cfg, tmp_path):
    name = f"stream_{uuid.uuid4().hex[:8]}"
    root = tmp_path / name
    scfg = stream_cfg(
        cfg, root, trigger="processing-time", interval_s=0.2, idle_stop_s=4.0, timeout_s=240.0
    )
    (root / "incoming").mkdir(parents=True)
    reads: list[list[dict]] = []
    done = threading.Event()

    def reader() -> None:
        while not done.is_set():
            try:
                reads.append(table_rows(scfg, name))
            except Exception:  # the table has no commit yet
                pass
            time.sleep(0.05)

    def started(_query) -> None:
        threading.Thread(target=lambda: feed(root / "incoming", 6, ROWS, 0.4), daemon=True).start()
        threading.Thread(target=reader, daemon=True).start()

    try:
        report = run_stream(
            spark, pg, scfg, str(root / "table"), name, say=lambda _m: None, started=started
        )
    finally:
        done.set()
    assert report.files == 6 and report.replayed == []
    table = catalog.get_table(pg, name)
    consumed = consumed_batches(pg, table)
    recorded = batches(pg, table)
    # Every read equals the oracle over the files of the first k micro-batches, some k.
    sums, ends = {}, 0
    for b in recorded:
        ends += len(b.source_files)
        sums[requests_total([c.path for c in consumed[:ends]])] = ends
    seen = set()
    for rows in reads:
        total = sum(r["requests"] for r in rows)
        assert total in sums, f"a read saw {total} requests: no whole micro-batches sum to it"
        if sums[total] not in seen:
            seen.add(sums[total])
            assert rows == expected_rows(consumed[: sums[total]])
    assert len(reads) > 0 and len(seen) >= 2  # reads landed between micro-batches
    assert table_rows(scfg, name) == expected_rows(consumed)


def test_row_groups_and_files_of_one_micro_batch_apply_in_order(spark, pg, cfg, tmp_path):
    """A key in two row groups of one file and in a later file of the same micro-batch:
    its last values are the last file's, its requests the sum of all three rows."""
    import pyarrow as pa

    name = f"stream_{uuid.uuid4().hex[:8]}"
    root = tmp_path / name
    scfg = stream_cfg(cfg, root)
    incoming = root / "incoming"
    incoming.mkdir(parents=True)
    first = feed_table(0, ROWS)
    later = first.slice(0, 50)
    later = later.set_column(later.schema.get_field_index("city"), "city", pa.array(["later"] * 50))
    # Two row groups in the first file, both holding the first 50 keys.
    pq.write_table(pa.concat_tables([first, later]), incoming / "a.parquet", row_group_size=ROWS)
    last = later.set_column(later.schema.get_field_index("city"), "city", pa.array(["last"] * 50))
    pq.write_table(last, incoming / "b.parquet")
    report = run_stream(spark, pg, scfg, str(root / "table"), name, say=lambda _m: None)
    assert report.committed == [0] and report.files == 2
    rows = {r["uuid"]: r for r in table_rows(scfg, name)}
    table = catalog.get_table(pg, name)
    assert list(rows.values()) == expected_rows(consumed_batches(pg, table))
    key = first.column("uuid")[0].as_py()
    assert rows[key]["city"] == "last"
    assert rows[key]["requests"] == 3 * first.column("requests")[0].as_py()


def _tokens(pg, table) -> int:
    from meta.connection import session

    with session(pg) as c, c, c.cursor() as cur:
        cur.execute(
            "SELECT count(*) FROM contest_write_token WHERE table_id = %s", (table.table_id,)
        )
        return int(cur.fetchone()[0])


def test_a_folder_through_a_symlink_is_the_same_files(spark, pg, cfg, tmp_path):
    """A new checkpoint over the consumed folder reached through a symlink is refused
    (real paths compared), and the refused micro-batch leaves no write token behind."""
    name = f"stream_{uuid.uuid4().hex[:8]}"
    root = tmp_path / name
    scfg = stream_cfg(cfg, root)
    feed(root / "incoming", 2, ROWS, 0)
    run_stream(spark, pg, scfg, str(root / "table"), name, say=lambda _m: None)
    table = catalog.get_table(pg, name)
    recorded, tokens = batches(pg, table), _tokens(pg, table)
    (root / "alias").symlink_to(root / "incoming", target_is_directory=True)
    alias = override(
        scfg, {"stream.source": str(root / "alias"), "stream.checkpoint": str(root / "other")}
    )
    with pytest.raises(HarnessError, match="incoming/feed-00000.\\.parquet was committed to"):
        run_stream(spark, pg, alias, str(root / "table"), name, say=lambda _m: None)
    assert batches(pg, table) == recorded
    assert _tokens(pg, table) == tokens  # the refused batch's tokens are released
    assert table_rows(scfg, name) == expected_rows(consumed_batches(pg, table))


def test_a_batch_id_planned_again_with_new_files_is_refused(spark, pg, cfg, tmp_path):
    """The checkpoint loses the last batch's commit and offset entries (restored from an
    older copy) and a new file lands: Spark plans that batch id again with other files.
    Skipped as a replay they were lost; it is refused, naming both sets."""
    name = f"stream_{uuid.uuid4().hex[:8]}"
    root = tmp_path / name
    scfg = stream_cfg(cfg, root, max_files_per_trigger=1)
    feed(root / "incoming", 2, ROWS, 0)
    run_stream(spark, pg, scfg, str(root / "table"), name, say=lambda _m: None)
    table = catalog.get_table(pg, name)
    recorded = batches(pg, table)
    assert [b.batch_id for b in recorded] == [0, 1]
    for kind in ("commits", "offsets"):
        (root / "checkpoint" / kind / "1").unlink()
        (root / "checkpoint" / kind / ".1.crc").unlink(missing_ok=True)
    feed(root / "incoming", 1, ROWS, 0)
    with pytest.raises(HarnessError, match="batch 1 of query .* was committed with .*planned it"):
        run_stream(spark, pg, scfg, str(root / "table"), name, say=lambda _m: None)
    assert batches(pg, table) == recorded


def test_a_file_landing_after_a_later_one_and_a_file_put_back(spark, pg, cfg, tmp_path):
    """feed-000001 landing after feed-000002 was committed would apply out of name
    order: refused, naming it. A consumed file put back under its name (Spark's file
    source skips it): a warning names it."""
    import os

    name = f"stream_{uuid.uuid4().hex[:8]}"
    root = tmp_path / name
    scfg = stream_cfg(cfg, root)
    incoming = root / "incoming"
    incoming.mkdir(parents=True)
    for i in (0, 2):
        pq.write_table(feed_table(i, ROWS), incoming / f"feed-{i:06d}.parquet")
    said: list[str] = []
    run_stream(spark, pg, scfg, str(root / "table"), name, say=said.append)
    table = catalog.get_table(pg, name)
    recorded = batches(pg, table)
    # put back: new content, a later modification time
    first = incoming / "feed-000000.parquet"
    pq.write_table(feed_table(5, ROWS), first)
    later = time.time() + 10
    os.utime(first, (later, later))
    pq.write_table(feed_table(1, ROWS), incoming / "feed-000001.parquet")
    said.clear()
    with pytest.raises(HarnessError, match="feed-000001.parquet: landed after .*feed-000002"):
        run_stream(spark, pg, scfg, str(root / "table"), name, say=said.append)
    assert batches(pg, table) == recorded
    assert any("feed-000000.parquet was put back" in m for m in said), said


@pytest.mark.parametrize("bad", ["text", "string-requests"])
def test_a_bad_source_file_is_named_in_one_line(spark, pg, cfg, tmp_path, bad):
    import pyarrow as pa

    from contest.errors import DataError

    name = f"stream_{uuid.uuid4().hex[:8]}"
    root = tmp_path / name
    scfg = stream_cfg(cfg, root)
    incoming = root / "incoming"
    incoming.mkdir(parents=True)
    path = incoming / "feed-000000.parquet"
    if bad == "text":
        path.write_text("not a parquet file\n")
    else:
        t = feed_table(0, 20)
        i = t.schema.get_field_index("requests")
        t = t.set_column(i, "requests", pa.array([str(v) for v in t.column(i).to_pylist()]))
        pq.write_table(t, path)
    with pytest.raises(DataError, match=f"^{path}: "):
        run_stream(spark, pg, scfg, str(root / "table"), name, say=lambda _m: None)


@pytest.mark.spark
@pytest.mark.slow
def test_ctrl_c_stops_the_stream_and_exits_130(pg, cfg, tmp_path):
    """Ctrl-C (SIGINT to the process group, as a terminal sends it) while the query
    runs: the query stops, `contest: interrupted`, exit 130, no py4j traceback (it
    broke the gateway inside the wait: exit 1)."""
    import os
    import signal

    from contest.infra.proc import kill_group, wait_bounded
    from contest.stream.feed import write_feed_file
    from contest.trials.stream.stage import (
        batch_lines,
        make_stage,
        read_text,
        start_live_stream,
    )

    cfg = dataclasses.replace(cfg, work_dir=str(tmp_path))
    stage = make_stage(cfg, pg, tmp_path / "bench", f"stream_{uuid.uuid4().hex[:8]}", cores=1)
    stage.incoming.mkdir(parents=True, exist_ok=True)
    write_feed_file(stage.incoming, 0, 50)
    log = stage.root / stage.name / "logs" / "live.log"
    err = log.with_suffix(".err")
    proc, start = start_live_stream(stage, log)
    try:
        while not batch_lines(read_text(err)):
            assert proc.poll() is None and time.monotonic() - start < 300, read_text(err)[-2000:]
            time.sleep(0.2)
        os.killpg(proc.pid, signal.SIGINT)
        code = wait_bounded(proc, 120)
    finally:
        kill_group(proc)
    text = read_text(err)
    assert code == 130, text[-2000:]
    assert text.strip().splitlines()[-1] == "contest: interrupted"
    assert "Traceback" not in text and "py4j" not in text


def test_a_first_commits_replay_is_verified_and_gone_files_are_refused(spark, pg, cfg, tmp_path):
    """A kill right after a new table's first commit (its commit row, no commits/0 in
    the checkpoint): the restart checks the table's files before skipping the replay
    (all there: skipped, the table exact); with a data file of that commit gone, the
    replay is refused in one line naming it, nothing written."""
    name = f"stream_{uuid.uuid4().hex[:8]}"
    root = tmp_path / name
    scfg = stream_cfg(cfg, root)
    table_path = str(root / "table")
    feed(root / "incoming", 1, ROWS, 0)
    first = run_stream(spark, pg, scfg, table_path, name, say=lambda _m: None)
    assert first.committed == [0]
    table = catalog.get_table(pg, name)
    expected = expected_rows(consumed_batches(pg, table))
    commits = root / "checkpoint" / "commits"
    (commits / "0").unlink()
    (commits / ".0.crc").unlink(missing_ok=True)
    again = run_stream(spark, pg, scfg, table_path, name, say=lambda _m: None)
    assert again.replayed == [0] and again.committed == []
    assert table_rows(scfg, name) == expected

    (commits / "0").unlink()
    (commits / ".0.crc").unlink(missing_ok=True)
    data = sorted(Path(table_path).rglob("*.parquet"))
    data[0].unlink()
    with pytest.raises(HarnessError, match=r"is recorded as committed .* data file\(s\)") as info:
        run_stream(spark, pg, scfg, table_path, name, say=lambda _m: None)
    assert data[0].name in str(info.value) and "\n" not in str(info.value)
    assert batches(pg, table) == batches(pg, table)[:1]
