"""Imports where a reader looks for them: no two modules of `contest` and `meta` import
each other, directly or around a loop, counting the imports inside functions (so none
can hide a cycle there); and an import left inside a function says why on its line.

The convention: an import inside a function carries `# deferred: <reason>` on its own
line, or on a comment line directly above it; a run of imports directly below such a
comment shares it. The reason is what makes it worth the surprise (a slow or heavy
library the common paths, `contest --help` among them, start without)."""

from __future__ import annotations

import ast
from collections.abc import Iterable, Mapping

import grimp

from tests.support.config import REPO

MARKER = "# deferred:"


def cycles(imports: Mapping[str, Iterable[str]]) -> list[list[str]]:
    """The import cycles of a graph (module -> the modules it imports): its strongly
    connected components of two or more modules, or one that imports itself; each sorted,
    the list in order. Iterative (Tarjan's algorithm): no recursion limit on long chains."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(imports):
        if root in index:
            continue
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        work = [(root, iter(sorted(imports.get(root, ()))))]
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(imports.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1 or node in imports.get(node, ()):
                    found.append(sorted(component))
    return sorted(found)


def test_cycles_are_found():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a", "d"}, "e": {"a"}, "f": set()}
    assert cycles(graph) == [["a", "b", "c"], ["d"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_no_import_cycles():
    # grimp (what import-linter builds on) sees every import: at the top, inside
    # functions, under TYPE_CHECKING.
    graph = grimp.build_graph("contest", "meta", include_external_packages=False)
    imports = {m: graph.find_modules_directly_imported_by(m) for m in graph.modules}
    found = cycles(imports)
    assert not found, "import cycles (each line one cycle's modules):\n" + "\n".join(
        " <-> ".join(c) for c in found
    )


def undeclared_deferred_imports(source: str) -> list[int]:
    """The lines of the imports inside functions of `source` that say not why (see the
    module docstring); those under `if TYPE_CHECKING:` are left out."""
    lines = source.splitlines()

    def marked(node: ast.stmt) -> bool:
        here = lines[node.lineno - 1]
        above = lines[node.lineno - 2].strip() if node.lineno > 1 else ""
        return MARKER in here or above.startswith(MARKER)

    found: list[int] = []

    def visit(node: ast.AST, in_function: bool) -> None:
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            return
        inside = in_function or isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
        for field in ("body", "orelse", "finalbody", "handlers"):
            block = getattr(node, field, None)
            if not isinstance(block, list):
                continue
            covered = False  # the statement before is a marked import, directly above
            previous_end = -1
            for stmt in block:
                if isinstance(stmt, (ast.Import, ast.ImportFrom)) and inside:
                    covered = marked(stmt) or (covered and stmt.lineno == previous_end + 1)
                    if not covered:
                        found.append(stmt.lineno)
                else:
                    covered = False
                previous_end = stmt.end_lineno or stmt.lineno
        for child in ast.iter_child_nodes(node):
            visit(child, inside)

    visit(ast.parse(source), False)
    return sorted(found)


def test_undeclared_deferred_imports_are_found():
    src = (
        "import os\n"
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n"
        "    from a import b\n"
        "def f():\n"
        "    import json\n"  # 6: no reason
        "    import duckdb  # deferred: slow to import\n"
        "    # deferred: slow to import\n"
        "    import polars\n"
        "    from pyarrow import parquet\n"  # shares the comment above
        "\n"
        "    import numpy\n"  # 12: a blank line ends the run
        "    if os:\n"
        "        from meta import x\n"  # 14
        "    class C:\n"
        "        def g(self):\n"
        "            try:\n"
        "                import z  # deferred: optional\n"
        "            except ImportError:\n"
        "                from meta import y\n"  # 20
    )
    assert undeclared_deferred_imports(src) == [6, 12, 14, 20]


def test_every_import_inside_a_function_says_why():
    found = {}
    for top in ("contest", "meta"):
        for path in sorted((REPO / top).rglob("*.py")):
            lines = undeclared_deferred_imports(path.read_text())
            if lines:
                found[str(path.relative_to(REPO))] = lines
    assert not found, (
        f"imports inside functions without a `{MARKER} <reason>` comment (move them to "
        "the top of the module, or say why not):\n"
        + "\n".join(f"{path}: lines {', '.join(map(str, lines))}" for path, lines in found.items())
    )
