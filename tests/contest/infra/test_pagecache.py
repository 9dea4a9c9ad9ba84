"""Reading a run's batches into the page cache before it: every byte of every file read
once, a folder too large for the memory left alone, a missing one named."""

from __future__ import annotations

from pathlib import Path

from contest.infra.pagecache import CHUNK, fits, read_ahead


def test_at_most_half_the_available_memory_is_read_ahead() -> None:
    assert fits(0, 0)
    assert fits(50, 100) and not fits(51, 100)


def test_every_file_is_read_whole(tmp_path: Path) -> None:
    (tmp_path / "base-0").mkdir()
    sizes = {"base-0/part-0.parquet": CHUNK + 17, "base-1.parquet": 3, "empty": 0}
    for name, size in sizes.items():
        (tmp_path / name).write_bytes(b"x" * size)
    said: list[str] = []
    done = read_ahead(tmp_path, said.append, available=10 * CHUNK)
    assert (done.files, done.bytes, done.skipped) == (3, sum(sizes.values()), None)
    assert said and "read ahead" in said[0] and "untimed" in said[0]


def test_a_folder_over_half_the_memory_is_left_alone(tmp_path: Path) -> None:
    (tmp_path / "b.parquet").write_bytes(b"x" * 1000)
    said: list[str] = []
    done = read_ahead(tmp_path, said.append, available=1999)
    assert done.bytes == 0 and done.skipped and "over half" in done.skipped
    assert "not read ahead" in said[0]
    assert read_ahead(tmp_path / "gone", said.append).skipped
