"""The fault cases of the harness's own streaming sink (contest/stream/sink.py), as
`contest bench stream --trials N` runs them on one stage, in this order:

- kill -9: one stream, killed at random moments `trials` times (after 0-2 logged
  commits plus up to a second; a kill before the first commit too), restarted from its
  checkpoint each time while the feed goes on. The sink waits a second after each
  commit before Spark's checkpoint records the batch (`--pause-after-commit`), so most
  kills after a commit land in that window and the restart replays the batch. After
  each kill the table is exact, and at the end an available-now run drains the folder:
  every fed file consumed once.
- replay: the checkpoint's last commit-log entry deleted (a crash between the table's
  commit and Spark's), the query restarted (a new run id, the checkpoint's query id):
  Spark runs the batch again, the sink skips it.
- new checkpoint: a second query over the consumed folder is refused (it would count
  every file again).

They are trials (runs broken on purpose through contest/trials/breaks.py, then checked),
so they live with the other stream trials, apart from the bench that measures.
"""

from __future__ import annotations

import random

from contest.sitting import Row, Say
from contest.trials.breaks import broken_when_logged
from contest.trials.stream.stage import (
    CHILD_TIMEOUT_S,
    Feeder,
    Stage,
    batch_lines,
    check_table,
    drain,
    logged,
)
from meta.stream import batches


def kill_trials(
    stage: Stage, trials: int, rows: int, rng: random.Random, seed: int, say: Say
) -> Row:
    logs = stage.root / stage.name / "logs"
    feeder = Feeder(stage.incoming, rows, 1.0, seed)
    feeder.start()
    replayed = 0
    bad: list[str] = []
    kills_after_commit = 0
    for i in range(trials):
        log = logs / f"trial-{i:02d}.log"
        err = log.with_suffix(".err")
        # After 0-2 logged commits plus up to a second; 0: a moment up to 2 s after the
        # query started (before its first commit, mostly).
        after = rng.randint(0, 2)
        then = rng.uniform(0.0, 2.0) if after == 0 else rng.uniform(0.0, 1.0)
        cmd = stage.command(
            "--trigger", "processing-time", "--interval", "0.5",
            "--max-files-per-trigger", "4", "--pause-after-commit", "1.0",
        )  # fmt: skip
        kill, text = broken_when_logged(
            cmd,
            log,
            stage.env,
            stage.root,
            logged(after, "committed"),
            within_s=CHILD_TIMEOUT_S,
            poll_s=0.05 if after == 0 else 0.02,
            then_s=then,
        )
        exited = kill.exited
        lines = batch_lines(text)
        replayed += sum(b["status"] == "replayed" for b in lines)
        kills_after_commit += any(b["status"] == "committed" for b in lines)
        check = check_table(stage)
        say(
            f"kill -9 trial {i + 1}/{trials}: after {kill.at_s:.1f} s, "
            f"{sum(b['status'] == 'committed' for b in lines)} commit(s) logged, "
            f"{check.consumed} file(s) in the table: {'exact' if check.exact else check.detail}"
            + (f" (the child had exited: {exited})" if exited is not None else "")
        )
        if not check.exact or exited not in (None, -9):
            bad.append(f"trial {i + 1}: {check.detail or f'child exited {exited}: see {err}'}")
    fed = feeder.stop()
    code, text = drain(stage, logs / "drain.log")
    replayed += sum(b["status"] == "replayed" for b in batch_lines(text))
    final = check_table(stage, fed)
    if code != 0 or not final.exact:
        bad.append(f"drain: exit {code}, {final.detail}")
    say(
        f"kill -9: {trials} trials, {len(fed)} files fed, {final.consumed} consumed once, "
        f"{final.double} twice, {replayed} replayed batch(es) skipped: "
        f"{'exact' if not bad else bad[0]}"
    )
    return {
        "case": "kill -9 at random moments, restart from the checkpoint",
        "trials": trials,
        "kills_after_a_commit": kills_after_commit,
        "files_fed": len(fed),
        "files_consumed": final.consumed,
        "lost_files": len(fed) - final.consumed,
        "double_commits": final.double,
        "batches_replayed": replayed,
        "rows": final.rows,
        "exact": not bad,
        "problems": bad[:5],
    }


def replay_case(stage: Stage, say: Say) -> Row:
    """The checkpoint's last commit-log entry deleted, then a restart."""
    logs = stage.root / stage.name / "logs"
    before = batches(stage.conn, stage.table())
    commits = stage.checkpoint / "commits"
    last = max(int(p.name) for p in commits.iterdir() if p.name.isdigit())
    (commits / str(last)).unlink()  # this bench's own checkpoint
    (commits / f".{last}.crc").unlink(missing_ok=True)
    code, text = drain(stage, logs / "replay.log")
    lines = batch_lines(text)
    after = batches(stage.conn, stage.table())
    check = check_table(stage)
    skipped = [b for b in lines if b["status"] == "replayed"]
    runs = {b.run_id for b in before if b.batch_id == last}
    new_run = {b.get("run_id") for b in skipped}
    ok = (
        code == 0
        and [b["batch_id"] for b in skipped] == [last]
        and after == before
        and check.exact
        and not (runs & new_run)
    )
    say(
        f"replay: batch {last} run again by Spark under a new run id, "
        f"{'skipped' if skipped else 'NOT skipped'}; "
        f"table {'exact' if check.exact else check.detail}"
    )
    return {
        "case": "replay: last commit-log entry deleted, restart (new run id, same query id)",
        "trials": 1,
        "files_consumed": check.consumed,
        "lost_files": 0,
        "double_commits": check.double + (len(after) - len(before)),
        "batches_replayed": len(skipped),
        "rows": check.rows,
        "exact": ok,
        "problems": [] if ok else [f"exit {code}; skipped {skipped}; {check.detail}"],
    }


def new_checkpoint_case(stage: Stage, say: Say) -> Row:
    """A second query (a new checkpoint, so a new query id) over the consumed folder."""
    logs = stage.root / stage.name / "logs"
    before = batches(stage.conn, stage.table())
    other = stage.root / stage.name / "checkpoint-2"
    code, text = drain(stage, logs / "new-checkpoint.log", other)
    after = batches(stage.conn, stage.table())
    check = check_table(stage)
    refused = code != 0 and "was committed to" in text
    ok = refused and after == before and check.exact
    say(f"new checkpoint over the consumed folder: {'refused' if refused else 'NOT refused'}")
    return {
        "case": "new query id (a new checkpoint) over the consumed folder: refused",
        "trials": 1,
        "files_consumed": check.consumed,
        "lost_files": 0,
        "double_commits": check.double + (len(after) - len(before)),
        "batches_replayed": 0,
        "rows": check.rows,
        "exact": ok,
        "problems": [] if ok else [f"exit {code}: {text.strip().splitlines()[-1:]}"],
    }
