"""What a format's `peer.format` on Spark is to the registry (contest/peers/registry.py):
an implementation named, streamed and counted by its peer, as `native_implementation`
(contest/peers/native/base.py) makes one of its native library. The format's folder
registers it with `register(spark_implementation(FORMAT, ...))`."""

from __future__ import annotations

from collections.abc import Mapping

from contest.data.changes import ChangeSupport
from contest.data.merge_engines import MergeEngine
from contest.peers.base import PeerFormat
from contest.peers.registry import AutoMaintenance, FormatFamily, Implementation, Strategy


def spark_implementation(
    peer: PeerFormat,
    table_format: str,
    runs_on: str,
    strategies: tuple[Strategy, ...],
    *,
    packages: Mapping[str, tuple[str, ...]],
    changes: ChangeSupport,
    family: FormatFamily,
    auto: AutoMaintenance,
    merge_engine: MergeEngine | None = None,
    counts_commits: bool = True,
) -> Implementation:
    """A format's `peer.format` on Spark as an implementation: named and streamed
    (`contest stream run --format`) as its peer, its commit records counted by the peer
    from the table's folder (`counts_commits` False: no count, for a peer whose folder
    this harness does not count)."""
    return Implementation(
        name=peer.name,
        table_format=table_format,
        runs_on=runs_on,
        peer=peer,
        packages=packages,
        strategies=strategies,
        stream=peer.name,
        changes=changes,
        commit_records=(lambda t: peer.commit_records(t.path)) if counts_commits else None,
        merge_engine=merge_engine,
        family=family,
        auto=auto,
    )
