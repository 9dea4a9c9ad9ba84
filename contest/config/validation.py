"""A Config's validation: every impossible setting refused in one line naming its key.

The settings that belong to the layers above (a peer format's options, a workload's
extra columns) are checked by those layers' own functions, registered with
`register_check` when their module is imported. `validate` imports every module named in
`CHECKERS` that the config needs itself before it runs the checks, so a check never
depends on an import some caller may forget (a `contest write --set peer.format=...` that
never imported the peer formats still has its format checked).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable

from contest.config.sections import (
    CODECS,
    DISTRIBUTIONS,
    READ_MERGES,
    RESULT_STATISTICS,
    STREAM_TRIGGERS,
    WRITE_SORTS,
    Config,
    PeerConfig,
    StreamConfig,
    WorkloadConfig,
)
from contest.errors import ConfigError
from meta.connection import parse_jdbc_url
from meta.errors import PgError


def sets_peer_settings(cfg: Config) -> bool:
    """Whether a config sets anything the peer formats own (peer.*, a stream sink): only
    then are their modules imported for their checks (every format's libraries cost a
    job ~0.45 s to import: results/costs.md), as each is when its strategy runs."""
    return cfg.peer != PeerConfig() or bool(cfg.stream.sink)


def always(cfg: Config) -> bool:
    return True


# The modules that register checks (each calls `register_check` at import), with when
# the config needs them: imported by name, as a plugin is found, so this layer names no
# module above it in its imports. A module imported anyway has its checks run always.
CHECKERS: tuple[tuple[str, Callable[[Config], bool]], ...] = (
    ("contest.peers.formats", sets_peer_settings),
    ("contest.data.workload", always),
    ("contest.data.file_writers", always),
    ("contest.engines", always),
)

_CHECKS: dict[str, Callable[[Config], None]] = {}


def register_check(name: str, check: Callable[[Config], None]) -> None:
    """Run `check` on every validated config (registered again under the same name, it
    replaces the earlier one). Call it at the import of a module named in `CHECKERS`."""
    _CHECKS[name] = check


def checks(cfg: Config) -> dict[str, Callable[[Config], None]]:
    """Every registered check, the modules of `CHECKERS` that `cfg` needs imported first."""
    for module, needed in CHECKERS:
        if needed(cfg):
            importlib.import_module(module)
    return dict(_CHECKS)


def validate(cfg: Config) -> None:
    if cfg.table.hash_buckets < 1:
        raise ConfigError(f"table.hash_buckets: must be at least 1, got {cfg.table.hash_buckets}")
    if not 1 <= cfg.pg.port <= 65535:
        raise ConfigError(f"pg.port: not a TCP port: {cfg.pg.port}")
    if cfg.write.threads < 1:
        raise ConfigError(f"write.threads: must be at least 1, got {cfg.write.threads}")
    if cfg.write.repartition < 0:
        raise ConfigError(f"write.repartition: must be 0 (off) or more: {cfg.write.repartition}")
    if cfg.write.mode not in ("mor", "cow"):
        raise ConfigError(f"write.mode: {cfg.write.mode!r} is not mor or cow")
    if cfg.write.codec not in CODECS:
        raise ConfigError(f"write.codec: {cfg.write.codec!r} is not one of {', '.join(CODECS)}")
    if cfg.read.codec not in CODECS:
        raise ConfigError(f"read.codec: {cfg.read.codec!r} is not one of {', '.join(CODECS)}")
    if cfg.write.reader not in ("arrow", "spark"):
        raise ConfigError(f"write.reader: {cfg.write.reader!r} is not arrow or spark")
    if cfg.write.shuffle not in ("arrow", "spark"):
        raise ConfigError(f"write.shuffle: {cfg.write.shuffle!r} is not arrow or spark")
    if cfg.write.task_rows < 0:
        raise ConfigError(f"write.task_rows: must be 0 (off) or more: {cfg.write.task_rows}")
    if cfg.write.batch_piece_rows < 0:
        raise ConfigError(
            f"write.batch_piece_rows: must be 0 (off) or more: {cfg.write.batch_piece_rows}"
        )
    for key in ("stock_batch_rows", "stock_threads", "stock_prefetch"):
        if getattr(cfg.read, key) < 0:
            raise ConfigError(f"read.{key}: {getattr(cfg.read, key)} is negative (0 = LakeSoul's)")
    if cfg.read.writer not in ("arrow", "spark"):
        raise ConfigError(f"read.writer: {cfg.read.writer!r} is not arrow or spark")
    if cfg.write.sort not in WRITE_SORTS:
        raise ConfigError(f"write.sort: {cfg.write.sort!r} is not one of {', '.join(WRITE_SORTS)}")
    if cfg.read.statistics not in RESULT_STATISTICS:
        raise ConfigError(
            f"read.statistics: {cfg.read.statistics!r} is not one of {', '.join(RESULT_STATISTICS)}"
        )
    if cfg.read.merge not in READ_MERGES:
        raise ConfigError(f"read.merge: {cfg.read.merge!r} is not one of {', '.join(READ_MERGES)}")
    if cfg.read.merge_memory_bytes < 0:
        raise ConfigError(
            f"read.merge_memory_bytes: must be 0 (whole buckets) or more: "
            f"{cfg.read.merge_memory_bytes}"
        )
    if cfg.read.buffer_bytes < 0:
        raise ConfigError(
            f"read.buffer_bytes: must be 0 (the merge budget's share) or more: "
            f"{cfg.read.buffer_bytes}"
        )
    if not 0 < cfg.oracle.memory_fraction <= 1:
        raise ConfigError(
            f"oracle.memory_fraction: must be in (0, 1], got {cfg.oracle.memory_fraction}"
        )
    if cfg.oracle.memory_bytes < 0 or cfg.oracle.parts < 0:
        raise ConfigError("oracle.memory_bytes and oracle.parts: must be 0 (auto) or more")
    if cfg.load_window_s <= 0:
        raise ConfigError(f"load_window_s: must be positive, got {cfg.load_window_s}")
    if cfg.spark.shuffle_partitions < 1:
        raise ConfigError("spark.shuffle_partitions: must be at least 1")
    if cfg.s3.endpoint and not cfg.s3.endpoint.startswith(("http://", "https://")):
        raise ConfigError(
            f"s3.endpoint: expected http://HOST:PORT or https://..., got {cfg.s3.endpoint!r}"
        )
    if bool(cfg.s3.access_key) != bool(cfg.s3.secret_key):
        raise ConfigError(
            "s3.access_key and s3.secret_key go together (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY)"
        )
    if cfg.cluster.workers < 1 or cfg.cluster.cores_per_worker < 1:
        raise ConfigError("cluster.workers and cluster.cores_per_worker: must be at least 1")
    _validate_peer(cfg.peer)
    validate_workload(cfg.workload)
    _validate_stream(cfg.stream)
    if cfg.pg.url:
        try:
            parse_jdbc_url(cfg.pg.url)
        except PgError as exc:
            raise ConfigError(f"pg.url (LAKESOUL_PG_URL): {exc}") from None
    for check in checks(cfg).values():
        check(cfg)
    if cfg.pg.url and not (cfg.pg.username and cfg.pg.password):
        raise ConfigError(
            "pg.url is set (external PostgreSQL) but pg.username or pg.password is missing: "
            "set LAKESOUL_PG_USERNAME and LAKESOUL_PG_PASSWORD"
        )


def _validate_peer(peer: PeerConfig) -> None:
    """The peer options every format shares; each format checks its own (below)."""
    for key in ("target_file_bytes", "broadcast_bytes", "buckets"):
        if getattr(peer, key) < 0:
            raise ConfigError(f"peer.{key}: must be 0 (default) or more, got {getattr(peer, key)}")


def _validate_stream(stream: StreamConfig) -> None:
    if stream.trigger not in STREAM_TRIGGERS:
        raise ConfigError(
            f"stream.trigger: {stream.trigger!r} is not one of {', '.join(STREAM_TRIGGERS)}"
        )
    if stream.interval_s <= 0 or stream.feed_interval_s < 0:
        raise ConfigError("stream.interval_s must be positive, stream.feed_interval_s 0 or more")
    for key in ("max_files_per_trigger", "idle_stop_s", "timeout_s", "pause_after_commit_s"):
        if getattr(stream, key) < 0:
            raise ConfigError(f"stream.{key}: must be 0 (off) or more, got {getattr(stream, key)}")
    if stream.feed_rows < 2 or stream.feed_files < 1:
        raise ConfigError("stream.feed_rows must be at least 2, stream.feed_files at least 1")


def validate_workload(w: WorkloadConfig) -> None:
    """Impossible shapes refused, naming the key."""
    if w.batches < 1:
        raise ConfigError(f"workload.batches: must be at least 1, got {w.batches}")
    for key in ("first_rows", "batch_rows"):
        if getattr(w, key) < 1:
            raise ConfigError(f"workload.{key}: must be at least 1, got {getattr(w, key)}")
    shares = ("update_share", "repeat_share", "null_share", "null_string_share")
    for key in (*shares, "delete_share", "reinsert_share"):
        if not 0 <= getattr(w, key) <= 1:
            raise ConfigError(f"workload.{key}: must be in [0, 1], got {getattr(w, key)}")
    if w.update_share + w.repeat_share > 1:
        raise ConfigError(
            f"workload.repeat_share: with update_share {w.update_share} it leaves no room "
            f"for new keys (the two must add up to at most 1, got {w.repeat_share})"
        )
    if w.distribution not in DISTRIBUTIONS:
        raise ConfigError(
            f"workload.distribution: {w.distribution!r} is not one of {', '.join(DISTRIBUTIONS)}"
        )
    if w.zipf_exponent <= 1:
        raise ConfigError(f"workload.zipf_exponent: must be above 1, got {w.zipf_exponent}")
    if w.recent_batches < 1:
        raise ConfigError(f"workload.recent_batches: must be at least 1, got {w.recent_batches}")
    if w.delete_share + w.reinsert_share > 1:
        raise ConfigError(
            f"workload.reinsert_share: with delete_share {w.delete_share} the two must add "
            f"up to at most 1, got {w.reinsert_share}"
        )
    if (w.delete_share or w.reinsert_share) and not w.op_column:
        raise ConfigError("workload.delete_share: deletes need an op column (workload.op_column)")
    if w.streams < 0:
        raise ConfigError(f"workload.streams: must be 0 or more, got {w.streams}")
    if w.files_per_batch < 1:
        raise ConfigError(f"workload.files_per_batch: must be at least 1, got {w.files_per_batch}")
    if w.order_column and w.order_column in (*w.key, w.op_column):
        raise ConfigError(
            f"workload.order_column: {w.order_column!r} is the key or the op column, not a "
            "log position"
        )
    _validate_key(w)


# A key of one or two columns: what LakeSoul's hash partitioning and every peer format's
# primary key take alike.
MAX_KEY_COLUMNS = 2


def _validate_key(w: WorkloadConfig) -> None:
    """The key's columns (the op column's spelling is the data layer's check)."""
    key = w.key
    if not 1 <= len(key) <= MAX_KEY_COLUMNS:
        raise ConfigError(f"workload.key: one or two column names, got {len(key)}: {key}")
    if any(not name.strip() for name in key):
        raise ConfigError(f"workload.key: a column name is empty: {key}")
    if len(set(key)) != len(key):
        raise ConfigError(f"workload.key: a column named twice: {key}")
    if w.op_column and w.op_column in key:
        raise ConfigError(f"workload.op_column: {w.op_column!r} is a key column ({key})")
