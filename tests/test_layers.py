"""What import-linter's contracts (./build.sh lint) do not check: no module imports another
module's private names (a leading `_`), so what modules share is public in one home."""

from __future__ import annotations

import ast

from tests.support.config import REPO


def private_imports(source: str, module: str) -> list[str]:
    """`from X import _name` in `source`, X one of the project's modules other than `module`
    (dunders allowed; a library's private names are another matter)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if (
            isinstance(node, ast.ImportFrom)
            and node.module
            and node.module.split(".")[0] in ("contest", "meta")
            and node.module != module
        ):
            for alias in node.names:
                if alias.name.startswith("_") and not alias.name.startswith("__"):
                    found.append(f"{node.module}.{alias.name}")
    return found


def test_private_imports_are_found():
    src = (
        "from meta.b import _x, y, __version__\nfrom contest.c import _z\n"
        "from lib import _v\ndef f():\n    from meta.b import _w\n"
    )
    assert private_imports(src, "contest.c") == ["meta.b._x", "meta.b._w"]


def test_no_module_imports_another_modules_private_names():
    found = {}
    for top in ("contest", "meta"):
        for path in sorted((REPO / top).rglob("*.py")):
            parts = list(path.relative_to(REPO).with_suffix("").parts)
            module = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
            names = private_imports(path.read_text(), module)
            if names:
                found[module] = names
    assert found == {}
