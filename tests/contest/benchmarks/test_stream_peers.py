"""The peer fault cases' pure parts: the oracle comparison, the micro-batches Spark's
file source log names, each format's commit count from its log, the rendered tables."""

from __future__ import annotations

import json

from contest.benchmarks.stream.bench import StreamBench
from contest.benchmarks.stream.meta import render_meta
from contest.benchmarks.stream.peers import render_peers
from contest.peers import formats
from contest.results.streaming import stream_record
from contest.trials.stream.peer import (
    batch_files,
    compare,
    micro_batch_files,
    micro_batches_with_files,
)


def _row(uuid: str, requests: int | None, name: str | None = "n") -> dict:
    return {"uuid": uuid, "requests": requests, "name": name}


def test_compare_tells_double_counted_lost_and_other_keys():
    expected = [_row("a", 2), _row("b", 3), _row("c", 4), _row("d", 5)]
    actual = [_row("a", 4), _row("b", 1), _row("c", 4, None), _row("e", 1)]
    # a: counted twice; b: short, d: missing (lost); c differs otherwise; e: unexpected
    assert compare(actual, expected) == {"double_keys": 1, "lost_keys": 2, "other_keys": 2}
    assert compare(expected, expected) == {"double_keys": 0, "lost_keys": 0, "other_keys": 0}


def _offsets(checkpoint, log_offsets: dict[int, int]) -> None:
    """Spark's offset log: a version line, the batch's metadata, the source's offset."""
    folder = checkpoint / "offsets"
    folder.mkdir(parents=True)
    for batch, offset in log_offsets.items():
        meta = json.dumps({"batchWatermarkMs": 0, "batchTimestampMs": 1, "conf": {}})
        (folder / str(batch)).write_text(f"v1\n{meta}\n" + json.dumps({"logOffset": offset}))
    (folder / ".0.crc").write_text("junk")


def test_micro_batches_map_spark_ids_to_the_source_batches_they_covered(tmp_path):
    # Killed runs left source batches 1 and 2 logged but never taken by Spark's offset
    # log: micro-batch 1 (logOffset 3) read source batches 1-3. Source batch 4 read no
    # file; the source log's compaction (9.compact) holds batches 0-3.
    log = tmp_path / "sources" / "0"
    log.mkdir(parents=True)

    def entry(name: str, batch: int) -> str:
        return json.dumps({"path": f"file:/in/{name}", "batchId": batch, "action": "add"})

    (log / "9.compact").write_text(
        "v1\n" + "\n".join(entry(n, b) for b, n in enumerate("abcd")) + "\n"
    )
    (log / "5").write_text(f"v1\n{entry('e', 5)}\n")
    (log / "4").write_text("v1\n")
    _offsets(tmp_path, {0: 0, 1: 3, 2: 4, 3: 5})
    assert micro_batch_files(tmp_path) == {0: {"a"}, 1: {"b", "c", "d"}, 3: {"e"}}
    assert micro_batches_with_files(tmp_path) == {0, 1, 3}
    # The source log alone would say five batches read files: two double commits hidden.
    assert len(batch_files(tmp_path)) == 5
    assert micro_batches_with_files(tmp_path / "nothing") == set()


def test_batch_files_names_the_files_of_each_micro_batch(tmp_path):
    log = tmp_path / "sources" / "0"
    log.mkdir(parents=True)

    def entry(name: str, batch: int) -> str:
        return json.dumps({"path": f"file:///in%20x/{name}", "batchId": batch, "action": "add"})

    (log / "0").write_text(f"v1\n{entry('feed-000000.parquet', 0)}\n")
    (log / "1").write_text(
        f"v1\n{entry('feed-000001.parquet', 1)}\n{entry('feed-000002.parquet', 1)}\n"
        + '{"path": "file:///in/feed-0000'  # a line being written
    )
    assert batch_files(tmp_path) == {
        0: {"feed-000000.parquet"},
        1: {"feed-000001.parquet", "feed-000002.parquet"},
    }


def test_commit_counts_from_each_formats_log(tmp_path):
    delta = tmp_path / "delta" / "_delta_log"
    delta.mkdir(parents=True)
    for v in range(4):
        (delta / f"{v:020d}.json").write_text("{}")
    assert formats.lookup("delta").commit_count(tmp_path / "delta") == 3  # after the create

    snaps = tmp_path / "paimon" / "contest.db" / "ccf" / "snapshot"
    snaps.mkdir(parents=True)
    for i, kind in enumerate(["APPEND", "APPEND", "COMPACT"], 1):
        (snaps / f"snapshot-{i}").write_text(json.dumps({"commitKind": kind}))
    (snaps / "LATEST").write_text("3")
    assert formats.lookup("paimon").commit_count(tmp_path / "paimon") == 2

    timeline = tmp_path / "hudi" / ".hoodie" / "timeline"
    timeline.mkdir(parents=True)
    for name in (
        "1.deltacommit.requested",
        "1.deltacommit.inflight",
        "1_2.deltacommit",
        ".1_2.deltacommit.crc",
        "3_4.deltacommit",
        "5_6.commit",
    ):
        (timeline / name).write_text("")
    meta = tmp_path / "hudi" / ".hoodie" / "metadata" / ".hoodie" / "timeline"
    meta.mkdir(parents=True)
    (meta / "00000000000000000_1.deltacommit").write_text("")  # the metadata table's
    assert formats.lookup("hudi-merger").commit_count(tmp_path / "hudi") == 2


def test_stream_formats_resolve_through_the_registry():
    assert formats.for_stream("hudi").name == "hudi-merger"
    assert formats.for_stream("delta").name == "delta"
    assert formats.for_stream("paimon").name == "paimon"


def test_peer_and_metadata_tables_render():
    peer = {
        "kind": "fault", "format": "paimon", "trials": 2, "replayed_batch": 3, "files_fed": 9,
        "micro_batches": 4, "table_commits": 5, "double_commits": 1, "double_keys": 7,
        "lost_keys": 0, "batches_replayed": 0, "exact": False, "problems": ["Reproduce: x"],
        "case": "kill -9", "files_consumed": None, "rows": 10,
    }  # fmt: skip
    meta = {
        "kind": "metadata", "history_commits": 0, "micro_batches": 1000,
        "commit_ms_first": 1.0, "commit_ms_last": 1.1, "last_over_first": 1.1,
        "commit_ms_p99": 3.0, "head_snapshot_bytes": 16020, "format": "lakesoul (harness)",
        "window": 100, "exact": True,
    }  # fmt: skip
    text = "\n".join(render_peers([stream_record(peer)]) + render_meta([stream_record(meta)]))
    # A line from before sinks were named: the format's default sink then and now.
    assert "| paimon, own | - (-) | 2 | 3 | 9 | 4 | 5 | 1 | 7 | 0 | 0 | NO: Reproduce: x |" in text
    assert "| 0 | 1,000 | 1.0 | 1.1 | 1.1 | 3.0 | 16,020 |" in text
    assert render_peers([]) == [] and render_meta([]) == []


def test_a_peers_freshness_renders_beside_an_older_lakesoul_sitting():
    def fresh(fmt: str, sitting: str, p50: float) -> dict:
        return {
            "kind": "freshness", "format": fmt, "sitting": sitting, "rate_files_s": 2.0,
            "rows_per_file": 500, "files": 20, "micro_batches": 9, "freshness_p50_s": p50,
            "freshness_p99_s": 9.0, "freshness_max_s": 9.5, "rows_per_s": 900.0,
            "rows_per_core_s": 1200.0, "cores": 2, "exact": True, "rows_per_s_fed": 1000.0,
            "visible": 20,
        }  # fmt: skip

    records = [
        fresh("lakesoul (harness)", "s1", 1.1),
        fresh("hudi", "s1", 7.7),
        fresh("hudi", "s2", 4.4),  # a peers-only sitting after: its figures replace s1's
    ]
    # The noise of the row's part, as its stamp says it: shown, not judged (the window is
    # not a job's own noise, contest.infra.noise.BUSY_RULE).
    stamp = {"machine_id": "m", "interval_s": 90.0, "outside_share": 0.03}
    records[2]["stamp"] = stamp | {"peak_outside_share": 0.6}
    text = StreamBench().render([stream_record(r) for r in records])
    assert "| lakesoul (harness) | s1 | 2 × 500 | 20 | 9 | 1.1 | 9.0 |" in text
    assert "| hudi, foreach-batch | s2 | 2 × 500 | 20 | 9 | 4.4 | 9.0 |" in text
    assert "| 1200.0 | 2 | 3% / 60% over 1.5 min | yes |" in text
    assert "busy by the per-job noise" in text
    assert "| 1200.0 | 2 | - | yes |" in text  # s1: no noise measured
    assert "7.7" not in text


def test_each_sink_of_a_format_is_a_row_of_its_own():
    """Hudi's own sink and the harness's `foreachBatch` measured in one sitting: two
    rows, never one replacing the other; a line without a sink is the default's."""
    fault = {
        "kind": "fault", "format": "hudi", "sitting": "s1", "case": "kill -9", "trials": 20,
        "replayed_batch": 9, "files_fed": 50, "micro_batches": 10, "table_commits": 10,
        "double_commits": 0, "double_keys": 0, "lost_keys": 0, "batches_replayed": 3,
        "exact": True, "rows": 9, "files_consumed": 50,
    }  # fmt: skip
    own = fault | {"sink": "own", "exact": False, "problems": ["134 keys differ"]}
    old = fault | {"sitting": "s0", "trials": 5}  # an older line: the default sink's
    text = StreamBench().render([stream_record(r) for r in (old, fault, own)])
    assert "| hudi, foreach-batch | s1 (-) | 20 | 9 | 50 | 10 | 10 | 0 | 0 | 0 | 3 | yes |" in text
    assert "| hudi, own | s1 (-) | 20 | 9 | 50 | 10 | 10 | 0 | 0 | 0 | 3 | NO: 134 keys" in text
    assert "s0" not in text


def test_each_part_shows_the_newest_sitting_that_ran_it():
    # A freshness-only sitting (--trials 0) after a full one: the kill trials of the
    # older sitting stay on the page, the freshness is the newer sitting's.
    fault = {
        "kind": "fault", "format": "lakesoul (harness)", "sitting": "s1", "case": "kill -9",
        "trials": 20, "files_fed": 580, "files_consumed": 580, "lost_files": 0,
        "double_commits": 0, "batches_replayed": 15, "exact": True, "rows": 5,
    }  # fmt: skip
    old_fresh = {
        "kind": "freshness", "format": "lakesoul (harness)", "sitting": "s1",
        "rate_files_s": 2.0, "rows_per_file": 500, "files": 20, "micro_batches": 9,
        "freshness_p50_s": 7.7, "freshness_p99_s": 9.0, "freshness_max_s": 9.5,
        "rows_per_s": 900.0, "rows_per_core_s": 1200.0, "cores": 2, "exact": True,
        "rows_per_s_fed": 1000.0, "visible": 20,
    }  # fmt: skip
    new_fresh = old_fresh | {"sitting": "s2", "freshness_p50_s": 1.1}
    text = StreamBench().render([stream_record(r) for r in (fault, old_fresh, new_fresh)])
    assert "| lakesoul (harness) | kill -9 | 20 | 580 / 580 | 0 | 0 | 15 | yes |" in text
    assert "| lakesoul (harness) | s2 | 2 × 500 | 20 | 9 | 1.1 | 9.0 |" in text
    assert "7.7" not in text


def test_boundary_kills_are_classified_by_what_they_left_and_rendered(tmp_path):
    """A kill right after a table commit: Spark's commit-log entry of its last planned
    batch missing is the replay window; Hudi's newest completed instant empty is its own.
    Both cases of each format render (the symlink trial beside the kills)."""
    from contest.benchmarks.stream.bench import StreamBench
    from contest.results.streaming import stream_record
    from contest.trials.stream.boundary import (
        BOTH,
        EMPTY_INSTANT,
        TABLE_ONLY,
        window,
    )
    from contest.trials.stream.stage import Stage

    stage = Stage(None, None, tmp_path, "s", tmp_path / "c.toml", {}, "hudi")  # type: ignore[arg-type]
    for kind, ids in (("offsets", (0, 1)), ("commits", (0,))):
        (stage.checkpoint / kind).mkdir(parents=True)
        for i in ids:
            (stage.checkpoint / kind / str(i)).write_text("v1\n")
    assert window(stage, "delta") == TABLE_ONLY
    (stage.checkpoint / "commits" / "1").write_text("v1\n")
    assert window(stage, "delta") == BOTH
    timeline = stage.table_path / ".hoodie" / "timeline"
    timeline.mkdir(parents=True)
    (timeline / "20260101000000001_20260101000000002.deltacommit").write_text("")
    assert window(stage, "hudi") == EMPTY_INSTANT

    base = {"kind": "boundary", "trials": 5, "files_fed": 40, "batches_replayed": 3}
    records = [
        {**base, "format": "hudi", "case": "kill at the boundary", "sitting": "s1",
         "windows": {EMPTY_INSTANT: 2, TABLE_ONLY: 3}, "exact": True, "problems": []},
        {**base, "format": "hudi", "case": "symlink", "sitting": "s1", "windows": {},
         "exact": False, "problems": ["exit 0"]},
    ]  # fmt: skip
    text = StreamBench().render([stream_record(r) for r in records])
    assert f"{EMPTY_INSTANT}: 2, {TABLE_ONLY}: 3" in text
    assert "| hudi | symlink | s1 | 5 | - | 40 | 3 | 0 | NO: exit 0 |" in text
    repaired = {**records[0], "case": "first commit", "sink": "foreach-batch"}
    repaired["batches_repaired"] = 2
    text = StreamBench().render([stream_record(repaired)])
    assert "| hudi, foreach-batch | first commit | s1 | 5 |" in text and "| 3 | 2 | yes |" in text


def test_a_peer_streams_child_runs_its_formats_preset_and_sink(tmp_path):
    """The child's config file holds every key: the format's strategy preset must be in
    it (a preset applied under the file would lose to its defaults), and the sink."""
    import dataclasses

    from contest.config import load_config, override
    from contest.trials.stream.peer import peer_stage

    cfg = dataclasses.replace(load_config(), work_dir=str(tmp_path))
    stage = peer_stage(cfg, tmp_path / "bench", "hudi", cores=1, sink="own")
    child = load_config(config_file=stage.config_file)
    assert (child.peer.format, child.peer.hudi_index, child.peer.buckets) == (
        "hudi-merger", "BUCKET", 8
    )  # fmt: skip
    assert child.stream.sink == "own" and child.spark.master == "local[1]"
    paimon = load_config(config_file=peer_stage(cfg, tmp_path / "b", "paimon", 1).config_file)
    assert (paimon.peer.buckets, paimon.stream.sink) == (8, "")
    # A key the user set yields nothing to the preset; the rest of the preset stays.
    mine = override(cfg, {"peer.buckets": 4})
    child = load_config(config_file=peer_stage(mine, tmp_path / "c", "hudi", 1).config_file)
    assert (child.peer.buckets, child.peer.hudi_index) == (4, "BUCKET")
