"""The configured peer format, looked up from the config alone (no Spark): `peer.format`
names one of the registry's formats (contest/peers/registry.py), and everything else
asks the format it finds here: what spark-submit must be given, the settings of a
running session, the table's properties. Each format's own option checks run whenever a
config is validated (registered with `contest.config`).
"""

from __future__ import annotations

from pathlib import Path

from contest.config import Config
from contest.config.validation import register_check
from contest.errors import ConfigError
from contest.peers import registry
from contest.peers.base import HARNESS_SINK, PeerFormat


def lookup(name: str) -> PeerFormat:
    """The format called `name`; an unknown one is a one-line error listing the known."""
    found = registry.peer_formats()
    try:
        return found[name]
    except KeyError:
        raise ConfigError(
            f"peer.format: {name!r} is not one of {', '.join(found)} (or empty for LakeSoul)"
        ) from None


def of(cfg: Config) -> PeerFormat:
    """The configured format (peer.format must be set)."""
    return lookup(cfg.peer.format)


def for_stream(name: str) -> PeerFormat:
    """The format whose streaming sink a stream of `name` runs (its own, or the one it
    names in `stream_format`)."""
    fmt = lookup(name)
    return lookup(fmt.stream_format) if fmt.stream_format else fmt


def validate(cfg: Config) -> None:
    """Each format's checks of the peer.* options it owns, and the selected format's
    name, codec and streaming sink."""
    for fmt in registry.peer_formats().values():
        fmt.validate(cfg.peer)
    if cfg.peer.format:
        of(cfg).check_codec(cfg.peer)
    if cfg.stream.sink and cfg.peer.format:
        for_stream(cfg.peer.format).stream_sink(cfg.stream.sink)  # one line naming its sinks
    elif cfg.stream.sink not in ("", HARNESS_SINK):
        raise ConfigError(
            f"stream.sink: the LakeSoul stream has the harness's {HARNESS_SINK} only, "
            f"not {cfg.stream.sink!r}"
        )


register_check("peer.format", validate)


def is_peer(cfg: Config) -> bool:
    return bool(cfg.peer.format)


def runtime_of(cfg: Config) -> registry.Runtime:
    """How the configured strategy's jobs run: its peer implementation's kind; LakeSoul's
    engines (no peer.format) are Spark jobs."""
    if not is_peer(cfg):
        return registry.SPARK
    of(cfg)  # one line naming an unknown format
    return registry.IMPLEMENTATIONS[cfg.peer.format].runtime


def coordinates(cfg: Config) -> tuple[str, ...]:
    """Maven coordinates of the configured format (peer.packages overrides the pin)."""
    if cfg.peer.packages:
        return tuple(c.strip() for c in cfg.peer.packages.split(",") if c.strip())
    of(cfg)  # one line naming an unknown format
    impl = registry.IMPLEMENTATIONS[cfg.peer.format]
    return tuple(dict.fromkeys(c for coords in impl.packages.values() for c in coords))


def start_conf(cfg: Config) -> dict[str, str]:
    return of(cfg).start_conf(cfg) if is_peer(cfg) else {}


def submit_options(cfg: Config) -> list[str]:
    """spark-submit options of a peer job: its packages and start settings (the JVM
    runs before the job's Python starts, so they cannot come from the session builder)."""
    if not is_peer(cfg):
        return []
    out = ["--packages", ",".join(coordinates(cfg))]
    for key, value in start_conf(cfg).items():
        out += ["--conf", f"{key}={value}"]
    return out


def runtime_conf(cfg: Config, table_path: Path) -> dict[str, str]:
    return of(cfg).runtime_conf(cfg, table_path)


def table_properties(cfg: Config) -> dict[str, str]:
    return of(cfg).table_properties(cfg)
