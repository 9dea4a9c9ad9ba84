"""A peer table format's engine (peer.format, contest/peers): its Write and Read jobs by
its implementation's kind, a Spark application or a plain Python process of the
format's own library."""

from __future__ import annotations

from contest.config import Config
from contest.engines import PEER, Abilities, JobOutcome, ReadJob, WriteJob, read_line, summary_line
from contest.errors import EXIT_FAILED, EXIT_OK, EXIT_USAGE
from contest.peers import formats
from contest.peers.native.job import run_native_read, run_native_write
from contest.peers.read import run_peer_read
from contest.peers.registry import NATIVE, SPARK
from contest.peers.write import run_peer_write

# A peer's Write and Read jobs by its implementation's kind (contest/peers/registry.py):
# a Spark application, or a plain Python process of the format's own library.
PEER_JOBS = {
    SPARK.name: (run_peer_write, run_peer_read),
    NATIVE.name: (run_native_write, run_native_read),
}


class Peer:
    """A peer table format (peer.format, contest/peers/registry.py): the batches (all, or
    those --only names; --append: into the table there) merged in version order, read
    by the format's own reader at its head, as of a version or the changes of a range
    (the table's batch ledger maps versions to the format's commits); --table is the
    table's folder. Its jobs by its implementation's kind (PEER_JOBS)."""

    name = PEER

    def abilities(self, cfg: Config) -> Abilities:
        # History through the format (contest/peers/base.py: read_as_of, read_changes,
        # expire; a format without one refuses in one line). Its vacuum is the format's
        # own expiry (contest/peers/expire.py).
        kind = formats.runtime_of(cfg)
        own = {k: f"peer format {cfg.peer.format} ({kind.label}): no {k} here" for k in kind.lacks}
        return Abilities(
            lacks={
                "merge": f"peer format {cfg.peer.format}: no LakeSoul metadata to merge",
                **own,
            },
        )

    def merges(self, cfg: Config, stage: str) -> tuple[str, ...]:
        return formats.of(cfg).merge_engines  # the format's own, both ways

    def write(self, cfg: Config, job: WriteJob) -> JobOutcome:
        job.refuse_concurrent(
            f"peer.format={cfg.peer.format}: --resume and --delay-commit are for LakeSoul "
            "tables; a peer write applies its batches in version order"
        )
        write, _ = PEER_JOBS[formats.runtime_of(cfg).name]
        report = write(cfg, job.data, job.table, **job.in_order)
        summary = summary_line(report)
        code = EXIT_OK if report.ok else EXIT_USAGE if report.refused else EXIT_FAILED
        return JobOutcome(report.to_dict(), (summary,), code)

    def read(self, cfg: Config, job: ReadJob) -> JobOutcome:
        job.refuse_concurrent(
            f"peer.format={cfg.peer.format}: --latest-complete and --allow-gaps are for "
            "LakeSoul tables (a peer table's versions are its ledger's commits)"
        )
        _, read = PEER_JOBS[formats.runtime_of(cfg).name]
        report = read(cfg, job.table, job.out, job.overwrite, **job.versions)
        line = read_line(
            f"{report['format']} table {report['table']}",
            report["rows"],
            report["seconds"],
            report["out"],
        )
        return JobOutcome(report, (line,), EXIT_OK)


ENGINE = Peer()
