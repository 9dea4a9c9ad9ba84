"""The Python libraries a native implementation runs on, checked before any work: each
must be installed at the version pinned in its registration (and pyproject.toml); one
that is missing or at another version is refused in one line naming it."""

from __future__ import annotations

from collections.abc import Sequence
from importlib.metadata import PackageNotFoundError, version

from contest.config import Config
from contest.errors import ConnectorError
from contest.peers import registry


def pinned(spec: str) -> tuple[str, str]:
    """`deltalake==1.6.6` -> ("deltalake", "1.6.6")."""
    name, sep, want = spec.partition("==")
    if not sep or not name or not want:
        raise ValueError(f"{spec!r}: a library is pinned as NAME==VERSION")
    return name.strip(), want.strip()


def problem(spec: str, installed: str | None) -> str | None:
    """Why the installed version (None: not installed) does not meet the pin, or None."""
    name, want = pinned(spec)
    if installed is None:
        return f"{name} is not installed (the strategy needs {name}=={want})"
    if installed != want:
        return f"{name} {installed} is installed, the strategy is pinned to {name}=={want}"
    return None


def installed(name: str) -> str | None:
    try:
        return version(name)
    except PackageNotFoundError:
        return None


def versions() -> dict[str, str | None]:
    """Every registered native implementation's libraries as installed (None: absent),
    for a run's disclosure."""
    specs = [s for impl in registry.implementations() for s in impl.libraries]
    return {name: installed(name) for name, _ in map(pinned, specs)}


def require(specs: Sequence[str]) -> None:
    """Every pinned library installed at its version, else one line naming the first."""
    for spec in specs:
        why = problem(spec, installed(pinned(spec)[0]))
        if why:
            raise ConnectorError(why)


def require_for(cfg: Config) -> None:
    """The configured peer format's libraries (none for a Spark peer or LakeSoul); a
    library that cannot run here at all (`unavailable`) is refused first."""
    impl = registry.IMPLEMENTATIONS.get(cfg.peer.format)
    if impl is None:
        return
    if impl.unavailable:
        raise ConnectorError(f"peer.format={impl.name}: {impl.unavailable}")
    require(impl.libraries)
