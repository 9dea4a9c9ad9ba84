"""The per-batch write amplification table built from evaluation records."""

from contest.peers.analysis import amplification_tables
from contest.results.runs import RunRecord


def _record(strategy, correct=True, seconds=2.0):
    batches = [
        {"version": 0, "operation": "create", "seconds": 5.0, "data_files_added": 2,
         "delete_files_added": 0, "log_files_added": 0, "bytes_added": 4_000_000,
         "table_files": 2, "metrics": {}},
        {"version": 1, "operation": "merge", "seconds": seconds, "data_files_added": 8,
         "delete_files_added": 0, "log_files_added": 0, "bytes_added": 5_000_000,
         "table_files": 10, "metrics": {"numTargetFilesRemoved": 2, "numTargetRowsCopied": 90}},
    ]  # fmt: skip
    return RunRecord.from_dict(
        {
            "strategy": strategy,
            "scale": 0.01,
            "correct": correct,
            "write_s": 10.0,
            "read_s": 3.0,
            "stored_bytes": 9_000_000,
            "peer_write": {"batches": batches},
        }
    )


def test_medians_per_version_from_correct_runs_only():
    text = amplification_tables(
        [_record("delta-merge", seconds=2.0), _record("delta-merge", seconds=4.0),
         _record("delta-merge", correct=False, seconds=100.0), RunRecord("optimized")]
    )  # fmt: skip
    assert "## scale 0.01, delta-merge (2 run(s)): write 10.0 s, read 3.0 s, stored 9.0 MB" in text
    assert "| 1 | merge | 3 | 8 | 0 | 0 | 5 | 2 | 90 | 10 |" in text  # median of 2 s and 4 s
    assert "| 0 | create | 5 | 2 | 0 | 0 | 4 | - | - | 2 |" in text
    assert "optimized" not in text


def test_batches_applied_at_once_are_not_said_to_add_no_files():
    """Paimon's batches 1-10 are applied by 4 writers at once: their own files are not
    known. The page said 0 files added for each while the table went from 8 to 88 files;
    it shows `-` and what they added together (also for records without the mark)."""
    batches = [
        {"version": 0, "operation": "create+append", "seconds": 11.0, "data_files_added": 8,
         "delete_files_added": 0, "log_files_added": 0, "bytes_added": 60_000_000,
         "table_files": 8, "table_bytes": 60_700_000, "metrics": {}},
    ] + [
        {"version": v, "operation": "append", "seconds": 4.0, "data_files_added": 0,
         "delete_files_added": 0, "log_files_added": 0, "bytes_added": 0,
         "table_files": 88, "table_bytes": 180_700_000, "metrics": {}}
        for v in (1, 2, 3)
    ]  # fmt: skip
    rec = RunRecord.from_dict(
        {"strategy": "paimon-agg", "scale": 0.1, "correct": True, "write_s": 27.0,
         "read_s": 15.0, "stored_bytes": 180_700_000,
         "peer_write": {"threads": 4, "batches": batches}}
    )  # fmt: skip
    text = amplification_tables([rec])
    assert "| 0 | create+append | 11 | 8 | 0 | 0 | 60 | - | - | 8 |" in text
    assert "| 2 | append | 4 | - | - | - | - | - | - | 88 |" in text
    assert "| 2 | append | 4 | 0 |" not in text
    assert "Versions 1-3 were applied 4 at once" in text
    assert "together they added 80 files to the data area and 120 MB" in text
