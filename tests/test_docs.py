"""The documentation site: its reference pages are what the code generates now (a
reference out of date fails here), every configuration key has its rule text, and the
site builds with `mkdocs build --strict` (no broken link or anchor)."""

from __future__ import annotations

import dataclasses
import sys

from contest.cli import reference
from contest.cli.main import build_parser
from contest.config import sections
from contest.data.operators import OPERATORS
from contest.infra.proc import run_captured
from contest.peers import registry
from contest.results.registry import FILES
from tests.support.config import REPO

DOCS = REPO / "docs"


def test_the_committed_reference_pages_are_the_generated_ones():
    stale = reference.stale(DOCS / "reference")
    assert not stale, (
        f"docs/reference/ out of date: {stale}; run `./build.sh docs` (or `python -m "
        "contest.cli.reference docs/reference`) and commit the pages"
    )


def test_every_configuration_key_has_its_rule_text():
    keys = reference.config_keys()
    missing = [k.name for k in keys if not k.text]
    assert not missing, (
        f"configuration keys without a comment above their field in "
        f"contest/config/sections.py: {missing}"
    )
    # Every leaf field of every section is a key of the page, once.
    names = [k.name for k in keys]
    assert len(names) == len(set(names))
    assert {"write.threads", "read.operators", "workload.key", "pg.port"} <= set(names)
    assert len(names) == sum(1 for _ in _leaves(sections.Config)), (
        "a section's field is missing from the reference"
    )


def _leaves(cls, prefix=""):
    for f in dataclasses.fields(cls):
        kind = cls.__annotations__[f.name]
        section = getattr(sections, str(kind), None)
        if dataclasses.is_dataclass(section):
            yield from _leaves(section, f"{prefix}{f.name}.")
        else:
            yield prefix + f.name


def test_a_field_shares_the_comment_of_the_run_it_ends_and_none_across_a_blank_line():
    @dataclasses.dataclass
    class Toy:
        # Rows of the first file, and of each later one.
        first: int = 1
        later: int = 2

        lone: int = 3
        # Its own.
        own: str = ""

    found = reference.field_comments(Toy)
    assert found == {
        "first": "Rows of the first file, and of each later one.",
        "later": "Rows of the first file, and of each later one.",
        "lone": "",
        "own": "Its own.",
    }


def test_the_references_name_every_registered_thing():
    pages = reference.generate()
    for path, _ in reference.commands(build_parser()):
        assert f"contest {' '.join(path)}" in pages["commands.md"]
    for op in OPERATORS:
        assert f"`{op}`" in pages["operators.md"]
    for f in FILES.values():
        assert f"`{f.pattern}`" in pages["results.md"]
        for cls in f.types:
            for field in dataclasses.fields(cls):
                assert f"`{field.name}`" in pages["results.md"]
    for name, strategy in registry.strategies().items():
        assert f"| `{name}` |" in pages["strategies.md"]
        if strategy.defaults is not None:
            assert "`peer.format" in pages["strategies.md"]


def test_the_site_builds_strict(tmp_path):
    """`mkdocs build --strict` (what ./build.sh docs and CI run): no broken link, anchor
    or page; the published results pages are part of the site."""
    done = run_captured(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-q", "-d", str(tmp_path / "site")],
        cwd=REPO,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert (tmp_path / "site" / "reference" / "configuration.html").is_file()
    assert (tmp_path / "site" / "results" / "index.html").is_file()
