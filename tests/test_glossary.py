"""The glossary (docs/architecture/index.md) and the names the CLI, the configuration
and the records use: every command, option, configuration key and record field that
carries a glossary word is listed under that word, every name listed exists, and the
words a row says not to use appear in no page and no help text."""

from __future__ import annotations

import dataclasses
import fnmatch
import re
from pathlib import Path

import pytest

from contest.cli.main import build_parser
from contest.cli.reference import commands, config_keys, help_text
from contest.results.registry import FILES

REPO = Path(__file__).resolve().parents[1]
PAGE = REPO / "docs" / "architecture" / "index.md"


def glossary(text: str) -> str:
    """The glossary's section of the page."""
    return text.split("## Glossary", 1)[1].split("\n## ", 1)[0]


def glossary_rows(text: str) -> dict[str, tuple[list[str], list[str]]]:
    """Each word in bold of the glossary's table: the names listed under it (backticked
    in its *named in* cell) and the words it says not to use."""
    section = glossary(text)
    rows = {}
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 4 or cells[0] in ("word", "") or set(cells[0]) <= {"-"}:
            continue
        word, _, named, avoid = cells
        if not (word.startswith("**") and word.endswith("**")):
            continue  # a plain definition
        word = word.strip("*")
        names = re.findall(r"`([^`]+)`", named)
        rows[word] = (names, [w.strip() for w in avoid.split(",") if w.strip()])
    return rows


def forms(word: str) -> list[str]:
    """How a word stands in a name: its singular and plural, spaces as - or _ or none."""
    plural = word[:-1] + "ies" if word.endswith("y") else word + "s"
    return [f.replace(" ", sep) for f in (plural, word) for sep in ("-", "_", "")]


def carries(name: str, word: str) -> bool:
    return any(f in name.lower() for f in forms(word))


def surface() -> set[str]:
    """Every name a user meets: `contest` commands, their options, configuration keys
    and the records' fields."""
    parser = build_parser()
    names = {k.name for k in config_keys()}
    for path, sub in [((), parser), *commands(parser)]:
        if path:
            names.add("contest " + " ".join(path))
        names.update(o for a in sub._actions for o in a.option_strings)
    for f in FILES.values():
        names.update(fl.name for cls in f.types for fl in dataclasses.fields(cls))
    return names


def listed(name: str, names: list[str]) -> bool:
    return any(name == n or fnmatch.fnmatchcase(name, n) for n in names)


ROWS = glossary_rows(PAGE.read_text())


def test_the_glossary_names_the_words_the_issue_asked_for():
    for word in ("strategy", "format", "engine", "native library", "sitting", "trial",
                 "runtime", "reference", "contender", "implementation"):  # fmt: skip
        assert word in ROWS, word


@pytest.mark.parametrize("word", sorted(ROWS))
def test_every_name_carrying_a_word_is_listed_under_it(word):
    names, _ = ROWS[word]
    longer = [w for w in ROWS if w != word and carries(w, word)]
    unlisted = sorted(
        n
        for n in surface()
        if carries(n, word)
        and not listed(n, names)
        and not any(carries(n, w) and listed(n, ROWS[w][0]) for w in longer)
    )
    assert not unlisted, f"{word!r} is in {unlisted}: list them under it or rename them"


@pytest.mark.parametrize("word", sorted(ROWS))
def test_every_name_listed_exists(word):
    names, _ = ROWS[word]
    known = surface()
    for name in names:
        if name.startswith(("contest ", "--")) or "." in name.strip("*"):
            if "/" in name or name.endswith(".py"):
                assert (REPO / name).exists() or name.startswith("contest/"), name
                continue
            assert any(fnmatch.fnmatchcase(k, name) for k in known), f"{word}: {name}"


def test_the_words_not_to_use_are_in_no_page_and_no_help():
    avoided = {w: a for w, (_, avoid) in ROWS.items() for a in avoid}
    parser = build_parser()
    helps = [help_text(sub) for _, sub in [((), parser), *commands(parser)]]
    pages = [p.read_text() for p in (REPO / "docs").rglob("*.md") if p != PAGE]
    pages.append(PAGE.read_text().replace(glossary(PAGE.read_text()), ""))
    pages.append((REPO / "README.md").read_text())
    for text in [*helps, *pages]:
        flat = " ".join(text.lower().split())
        for word, bad in avoided.items():
            assert bad not in flat, f"{bad!r} is said where {word!r} is meant"
