"""Concurrent `contest write --append --only` processes, on one table and racing to
create it."""

from __future__ import annotations

import shutil

from contest.infra.proc import spawn, wait_bounded
from contest.trials.breaks import read_text
from contest.trials.faults.checks import disjoint_indices, one_line_failure
from contest.trials.faults.context import (
    Ctx,
    half_commits,
    merge_read_check,
)
from contest.trials.faults.report import Outcome
from contest.write.job import WriteMode, prepare_table
from meta import catalog
from meta.commits import committed_versions


def concurrent_writers(ctx: Ctx, rounds: int, create_rounds: int, writers: int = 4) -> Outcome:
    o = ctx.outcome(
        "concurrent_writers",
        f"{writers} concurrent `contest write --append --only` processes",
        "none needed",
    )
    name = "faults_concurrent"
    path = ctx.root / "tables" / name
    logs = ctx.root / "logs" / name
    shares = disjoint_indices(11, writers)
    o.notes.append(
        f"Per round {writers} separate `contest write --append --only` processes over "
        f"disjoint batches ({' / '.join(','.join(map(str, s)) for s in shares)}), started "
        f"together: {rounds} rounds on an existing empty table, {create_rounds} racing to "
        "create it. Correct = every writer exits 0, one table, versions 0..10 committed, "
        "merged read equal to the oracle's. Lost counts batches not committed."
    )
    for r in range(rounds + create_rounds):
        creating = r >= rounds
        o.trials += 1
        if creating:
            catalog.drop_table(ctx.conn, name, ctx.cfg.table.namespace)
            shutil.rmtree(path, ignore_errors=True)
        else:
            prepare_table(ctx.conn, ctx.cfg, path, name, WriteMode.REPLACE)
        procs = [
            spawn(
                ctx.contest(
                    "write",
                    "--data",
                    ctx.data,
                    "--table",
                    path,
                    "--append",
                    "--only",
                    ",".join(map(str, share)),
                ),
                logs / f"round-{r:02d}-writer-{w}.log",
                ctx.env,
                ctx.root,
            )
            for w, share in enumerate(shares)
        ]
        codes = [wait_bounded(p) for p in procs]
        errors = [
            one_line_failure(read_text(logs / f"round-{r:02d}-writer-{w}.err")) or "?"
            for w, c in enumerate(codes)
            if c != 0
        ]
        tables = [
            t
            for t in catalog.list_tables(ctx.conn)
            if t.name == name or t.path.removeprefix("file://") == str(path)
        ]
        table = tables[0] if tables else None
        kept = sorted(committed_versions(ctx.conn, table)) if table else []
        bad = half_commits(ctx, table) if table else []
        ok, line = (
            merge_read_check(ctx, table, ctx.root / "results" / name) if table else (False, "")
        )
        good = codes == [0] * writers and len(tables) == 1 and kept == list(range(11)) and ok
        o.failures_observed += any(codes)
        o.lost += 11 - len(kept)
        o.half_commits += len(bad)
        o.recovered += good
        o.details.append(
            {
                "round": r,
                "kind": "create race" if creating else "existing table",
                "exit_codes": codes,
                "errors": errors,
                "tables": len(tables),
                "committed": kept,
                "check": line,
                "ok": good,
            }
        )
        ctx.say(
            f"writers round {r + 1} ({'create race' if creating else 'existing'}): exits "
            f"{codes}, {len(tables)} table(s), {len(kept)} versions, check {ok}"
        )
    return o
