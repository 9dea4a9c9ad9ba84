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
