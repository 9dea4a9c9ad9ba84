"""`contest bench interop`: for each table format, every engine here that reads it reads
every other engine's table of that format, each read checked by the oracle. A table is
written by its writer's whole `contest evaluate` (its own read is the diagonal cell);
every other reader then runs its Read job on that table (a Spark job or a Python
process, as its implementation's kind says), and the oracle checks the result. Each
cell is exact, wrong (the keys that differ, are missing or extra) or refused (the
error's first line). Correctness only: nothing here is timed or scored, so a matrix
measured on a busy machine is still true.

Which engines write and read which format (`families()`) is what each format's folder
registers (contest/peers/<format>/): its family on each implementation (the Spark peers,
the formats' native libraries, LakeSoul's two engines: the harness's and LakeSoul's own
Python engine) and each strategy's part, so a new format or strategy is in the matrix
with no edit here."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from contest.config import Config, absolute_paths, to_toml
from contest.errors import UsageError
from contest.evaluation.strategies import file_stem, is_strategy, preset
from contest.peers import registry
from contest.results.interop import COMPACTED, EXACT, REFUSED, WRITTEN, WRONG, InteropRecord
from contest.sitting import (
    CORES,
    DATA,
    SEED,
    WORK,
    Benchmark,
    Option,
    Sitting,
)


@dataclass(frozen=True)
class Family:
    """One table format (`key`, as --formats names it): the strategies whose tables are
    read (one per engine, and a table with deletion vectors or delete files where the
    format has them), the engines that read them (a strategy's name, or a reader-only
    implementation's), and the writers whose table is then compacted by the format's
    own compaction (`contest compact`) and read by every reader again."""

    key: str
    name: str
    writers: tuple[str, ...]
    readers: tuple[str, ...]
    compacted: tuple[str, ...] = ()


def families() -> tuple[Family, ...]:
    """Each format family the registry declares (by its rank) that has a part in this
    trial: its writers, readers and compacted tables in listing order (Spark's before
    the native libraries')."""
    out = []
    for fam in registry.families():
        parts = registry.interop_parts(fam)
        if parts:
            writers = tuple(n for n, p in parts if p.writes)
            readers = tuple(n for n, p in parts if p.reads)
            compacted = tuple(n for n, p in parts if p.compacted)
            out.append(Family(fam.key, fam.name, writers, readers, compacted))
    return tuple(out)


# A cell: (verdict, wrong keys, result rows, error or the check's first line).
Cell = tuple[str, int | None, int | None, str]
# One cell to measure: (family, writer, reader, the table's state when read).
Plan = tuple[Family, str, str, str]
SCALE = Option("--scale", "scale of generated data", float, 0.001, valid=lambda v: v > 0)


def formats_option() -> Option:
    """`--formats`, naming the families registered when the command is built or checked
    (a format registered after this module loaded, a test's toy one, too)."""
    keys = [f.key for f in families()]
    return Option(
        "--formats",
        f"formats to cross-read (default: all: {', '.join(keys)})",
        str,
        many=True,
        valid=lambda v: v in keys,
        rule="one of " + ", ".join(keys),
    )


def reader_preset(name: str) -> dict[str, object]:
    """The configuration a reader reads with: its strategy's preset, or, for a reader
    without a strategy (hudi-rs), its peer format alone."""
    if is_strategy(name):
        return preset(name)
    if name in registry.peer_formats():
        return {"peer.format": name}
    raise UsageError(f"interop reader {name!r}: neither a strategy nor a peer format")


def cells(chosen: Sequence[Family]) -> list[Plan]:
    """Every (family, writer, reader, state): the writer's own procedure first (its
    table and its own read, recorded when the writer is also one of the format's
    readers), then each other reader; for a writer whose table is compacted, then every
    reader again after the compaction."""
    out: list[Plan] = []
    for fam in chosen:
        for writer in fam.writers:
            out.append((fam, writer, writer, WRITTEN))
            out += [(fam, writer, r, WRITTEN) for r in fam.readers if r != writer]
            if writer in fam.compacted:
                out += [(fam, writer, r, COMPACTED) for r in fam.readers]
    return out


def row(
    fam: Family,
    writer: str,
    reader: str,
    verdict: str,
    scale: float,
    wrong_keys: int | None = None,
    rows: int | None = None,
    error: str = "",
    state: str = WRITTEN,
) -> dict[str, Any]:
    return {
        "family": fam.name,
        "writer": writer,
        "state": state,
        "reader": reader,
        "verdict": verdict,
        "wrong_keys": wrong_keys,
        "rows": rows,
        "error": error.splitlines()[0][:300] if error else "",
        "scale": scale,
    }


def render_matrix(records: Sequence[InteropRecord]) -> list[str]:
    """One table per format: a row per writer, a column per reader (in the order they
    were first measured: the plan's), the newest cell."""
    cell: dict[tuple[str, str, str], InteropRecord] = {}
    for r in records:
        cell[(r.family, r.table, r.reader)] = r
    newest = list(cell.values())
    lines: list[str] = []
    for fam in dict.fromkeys(r.family for r in newest):
        mine = [r for r in newest if r.family == fam]
        readers = list(dict.fromkeys(r.reader for r in mine))
        lines += [f"## {fam}", "", "| written by \\ read by | " + " | ".join(readers) + " |"]
        lines.append("|---" * (len(readers) + 1) + "|")
        by = {(r.table, r.reader): r for r in mine}
        for table in dict.fromkeys(r.table for r in mine):
            got = [by.get((table, rd)) for rd in readers]
            text = [("-" if g is None else g.cell).replace("|", "\\|") for g in got]
            lines.append(f"| {table} | " + " | ".join(text) + " |")
        lines.append("")
    return lines


class InteropBench(Benchmark):
    name = "interop"
    stem = "interop"
    summary = "every engine reads every other engine's table of its format (correctness)"
    description = (
        "For each table format, write its table with each engine that writes it (the "
        "contest's procedure, `contest evaluate`), then read that table with every other "
        "engine that reads the format (Spark's connectors, the formats' own Python "
        "libraries, the harness's read and LakeSoul's Python engine), each result checked "
        "by the oracle: exact, wrong (with the count of keys) or refused (the error's "
        "first line). Tables with deletion vectors or delete files (delta-dv, iceberg-dv) "
        "are read too, and some tables again after `contest compact` (the format's own "
        "compaction). Records to <results>/interop.jsonl, the page to interop.md."
    )
    options = (SCALE, DATA, SEED, CORES, WORK)  # and --formats (all_options)

    @classmethod
    def all_options(cls) -> tuple[Option, ...]:
        """The options, `--formats` after `--scale`, built when asked from the registry."""
        scale, *rest = super().all_options()
        return (scale, formats_option(), *rest)

    def run(self, sitting: Sitting) -> bool:
        # deferred: the evaluation pulls in pandas and tqdm; `contest --help` starts without
        from contest.evaluation.data_cache import cached_data, cached_expected
        from contest.evaluation.evaluate import evaluate, new_run

        opts, say = sitting.options, sitting.say
        known = families()
        chosen = set(opts.formats or [f.key for f in known])
        plan = cells([f for f in known if f.key in chosen])
        cfg = sitting.config()
        data = Path(opts.data) if opts.data else cached_data(cfg, opts.scale, opts.seed, say)
        expected = cached_expected(cfg, data, cfg.write.versions, say)
        scale, cores = opts.scale, opts.cores or 2
        written: dict[str, tuple[Any, str]] = {}  # writer -> (its run, why no table)
        compacted: dict[str, str] = {}  # writer -> why its compaction failed, or ""
        cell: Cell
        for fam, writer, reader, state in plan:
            if state == COMPACTED:
                if writer not in compacted:
                    compacted[writer] = compact_table(
                        sitting.config(preset(writer)), *written[writer]
                    )
                why = compacted[writer]
                if why:
                    cell = (REFUSED, None, None, why)
                else:
                    rcfg = sitting.config(reader_preset(reader))
                    cell = cross_read(
                        rcfg, written[writer][0], f"{writer}-compacted", reader, expected, cores
                    )
            elif reader == writer:  # the writer's own procedure: its table, its own read
                wcfg = sitting.config(preset(writer))
                rec = evaluate(wcfg, writer, data=data, cores=cores, say=say)
                run = new_run(absolute_paths(wcfg), writer, None, None, 0, None, None, say)
                why = "" if rec.phase_ok("write") else (rec.error or "its write failed")
                written[writer] = (run, why)
                cell = (REFUSED, None, None, rec.error or "its read failed")
                if rec.phase_ok("read") and rec.result_dir:
                    cell = checked(rec.result_dir, expected, cfg)
            else:
                run, why = written[writer]
                if why:
                    cell = (REFUSED, None, None, f"{writer} wrote no table: {why}")
                else:
                    rcfg = sitting.config(reader_preset(reader))
                    cell = cross_read(rcfg, run, writer, reader, expected, cores)
            if reader == writer and state == WRITTEN and writer not in fam.readers:
                continue  # a variant's table (deletion vectors): its format's readers read it
            verdict, bad, rows, error = cell
            sitting.record(row(fam, writer, reader, verdict, scale, bad, rows, error, state))
        return True

    def render(self, records: Sequence[Any]) -> str:
        lines = [
            "# Interop: each engine reading the others' tables",
            "",
            "Each table written by the engine of its row (the contest's procedure at a "
            "tiny scale), read by the engine of its column, the result checked by the "
            "oracle: exact; wrong, with the keys that differ, are missing or extra; or "
            "refused, with the error's first line. The diagonal is the writer's own "
            "read; a row without one (delta-dv, iceberg-dv: the Spark peer's table with "
            "deletion vectors or delete files) is read by the format's readers only, and a "
            "row `..., compacted` is that table after `contest compact` (the format's own "
            "compaction). Correctness only: nothing here is timed. Generated by `contest "
            "bench interop` (`contest report` renders it again).",
            "",
        ]
        shown = {(r.family, r.writer, r.reader): r for r in records}.values()
        if shown:
            held = ", ".join(f"`{s}`" for s in sorted({str(r.sitting) for r in shown}))
            scales = ", ".join(f"{s:g}" for s in sorted({r.scale for r in shown if r.scale}))
            lines += [f"Cells from sitting(s) {held}; scale {scales}.", ""]
        return "\n".join(lines + render_matrix(records))


def compact_table(cfg: Config, run: Any, why: str) -> str:
    """`contest compact` of the writer's table in a process of its own (the format's own
    compaction, as a user runs it): "" when it compacted, else why not (first line)."""
    # deferred: the evaluation pulls in pandas
    from contest.evaluation.jobs import child_config, child_env, cli_command, failure_cause
    from contest.infra.proc import run_timed
    from contest.peers.formats import is_peer

    if why:
        return f"{run.strategy} wrote no table: {why}"
    cfg = absolute_paths(cfg)
    folder = cfg.work_path / "interop"
    folder.mkdir(parents=True, exist_ok=True)
    stem = f"{file_stem(run.strategy)}-compact"
    config_file = folder / f"{stem}.toml"
    config_file.write_text(to_toml(child_config(cfg)))
    table = run.table_dir if is_peer(cfg) else run.table_name
    cmd = cli_command(config_file, "compact", "--table", table)
    job = run_timed(cmd, folder / f"{stem}.log", env=child_env(cfg), cwd=folder)
    return "" if job.ok else f"contest compact failed: {failure_cause(job)}"


def cross_read(cfg: Config, run: Any, writer: str, reader: str, expected: Path, cores: int) -> Cell:
    """The reader's Read job on the writer's table (its folder, or its name for the
    harness's read), then the oracle's check."""
    # deferred: the evaluation pulls in pandas
    from contest.evaluation.jobs import child_config, child_env, failure_cause, run_job
    from contest.peers.formats import is_peer

    cfg = absolute_paths(cfg)
    folder = cfg.work_path / "interop"
    folder.mkdir(parents=True, exist_ok=True)
    stem = f"{file_stem(writer)}-read-by-{file_stem(reader)}"
    config_file = folder / f"{stem}.toml"
    config_file.write_text(to_toml(child_config(cfg)))
    out = folder / "result" / stem
    table = run.table_dir if is_peer(cfg) else run.table_name
    args = ["--table", str(table), "--out", str(out), "--overwrite"]
    job = run_job(cfg, "read", cores, config_file, child_env(cfg), folder / f"{stem}.log", args)
    if not job.ok:
        return REFUSED, None, None, failure_cause(job)
    return checked(str(out), expected, cfg)


def checked(result: str, expected: Path, cfg: Config) -> Cell:
    """The oracle's verdict on a result folder: exact, or wrong with the keys that
    differ, are missing or extra (and the check's first line)."""
    # deferred: the checker pulls in DuckDB
    from contest.data.checker import compare
    from contest.data.oracle import config_budget

    report = compare(result, expected, budget=config_budget(cfg.oracle))
    if report.ok:
        return EXACT, None, report.actual_rows, ""
    bad = report.differing_keys + report.missing_keys + report.extra_keys
    return WRONG, bad or None, report.actual_rows, report.render().splitlines()[0]
