"""The shell examples of README.md and docs/: every ```sh, ```bash and ```console block,
its commands as argv lists, and whether the docs mark it not run (a
`<!-- not run: REASON -->` comment on the line above the block) and why."""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from pathlib import Path

from tests.support.config import REPO

FENCE = re.compile(r"^```(sh|bash|console)[ \t]*$")
NOT_RUN = re.compile(r"^<!--\s*not run:\s*(.*?)\s*-->$")
# The examples run at this scale at most, with one round: a tiny scale, as the tour.
TINY_SCALE = 0.001
# `contest dataset tpch --scale-factor`: 6,000 lines of lineitem.
TINY_SCALE_FACTOR = 0.001


@dataclass(frozen=True)
class Example:
    """One shell block: where it is, its commands, and why it is not run (if it is not)."""

    path: Path
    line: int  # 1-based line of the opening fence
    lang: str
    text: str
    not_run: str | None

    @property
    def where(self) -> str:
        return f"{self.path.relative_to(REPO)}:{self.line}"

    def commands(self) -> list[list[str]]:
        """The block's commands in order: a console block's `$ ` lines; a shell block's
        lines with their `\\` continuations joined, comments dropped and `&&` split."""
        if self.lang == "console":
            return [shlex.split(line[2:]) for line in self.text.splitlines() if line[:2] == "$ "]
        joined = re.sub(r"\\\n", " ", self.text)
        found: list[list[str]] = []
        for line in joined.splitlines():
            words = shlex.split(line, comments=True)
            while words:
                cut = words.index("&&") if "&&" in words else len(words)
                if words[:cut]:
                    found.append(words[:cut])
                words = words[cut + 1 :]
        return found


def doc_files() -> list[Path]:
    """README.md and every page of docs/, the generated references included."""
    return [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md"))]


def examples(path: Path) -> list[Example]:
    lines = path.read_text().splitlines()
    found: list[Example] = []
    i = 0
    while i < len(lines):
        fence = FENCE.match(lines[i])
        if not fence:
            i += 1
            continue
        end = next(j for j in range(i + 1, len(lines)) if lines[j].startswith("```"))
        above = next((lines[k].strip() for k in range(i - 1, -1, -1) if lines[k].strip()), "")
        mark = NOT_RUN.match(above)
        body = "\n".join(lines[i + 1 : end]) + "\n"
        found.append(Example(path, i + 1, fence.group(1), body, mark.group(1) if mark else None))
        i = end + 1
    return found


def every_example() -> list[Example]:
    return [e for path in doc_files() for e in examples(path)]


def tiny(argv: list[str]) -> list[str]:
    """`argv` at a tiny scale and one round: `--scale S` at most TINY_SCALE, TPC-H's
    `--scale-factor` at most TINY_SCALE_FACTOR, `--repeat 1`."""
    out = list(argv)
    for i, word in enumerate(out[:-1]):
        if word == "--scale":
            out[i + 1] = str(min(float(out[i + 1]), TINY_SCALE))
        elif word == "--scale-factor":
            out[i + 1] = str(min(float(out[i + 1]), TINY_SCALE_FACTOR))
        elif word == "--repeat":
            out[i + 1] = "1"
    return out


def section_block(path: Path, heading: str, lang: str) -> str:
    """The first ```lang block under `heading` (a `## ` or `### ` title) in `path`."""
    text = path.read_text()
    section = text.split(heading, 1)[1].split("\n## ", 1)[0]
    match = re.search(rf"```{lang}\n(.*?)```", section, re.S)
    assert match, f"{path.name}: no {lang} block under {heading!r}"
    return match.group(1)


def tour_commands(path: Path = REPO / "README.md") -> list[list[str]]:
    """The quick tour's commands (README.md's, or the getting-started page's)."""
    block = section_block(path, "## Quick tour", "console")
    return [shlex.split(line[2:]) for line in block.splitlines() if line.startswith("$ ")]
