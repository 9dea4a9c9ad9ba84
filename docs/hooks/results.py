"""MkDocs hook: the published results pages (results/, written by `contest report`) join
the site under results/ as they are, with the charts and notes they link, so the site
shows the same pages the repository holds and never a copy that could drift."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mkdocs.structure.files import File, Files

REPO = Path(__file__).resolve().parents[2]
SHOWN = {".md", ".png", ".txt", ".svg", ".jsonl"}


def on_files(files: Files, config: Any) -> Files:
    for path in sorted((REPO / "results").rglob("*")):
        if path.is_file() and path.suffix in SHOWN:
            rel = path.relative_to(REPO).as_posix()
            files.append(File(rel, str(REPO), config["site_dir"], config["use_directory_urls"]))
    return files
