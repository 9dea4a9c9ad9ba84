"""The page of `contest bench peers` (peer_sittings.md): each sitting's table of
strategies, its intervals and ratios, and the two rows per format; apart from running
the sitting (bench.py), so the page is rebuilt from the records alone (`contest report`).
"""

from __future__ import annotations

from collections.abc import Sequence

from contest.results.disclosure import disclosure_name
from contest.results.intervals import Interval, geometric_mean
from contest.results.runs import RunRecord
from contest.results.sittings import REFERENCE, SittingSummary, groups, newest, summarize


def render(records: Sequence[RunRecord]) -> str:
    """The whole page: the newest sitting of each scale, shape and codec, then the
    earlier ones."""
    runs = list(records)
    lines = [
        "# Peers: interleaved sittings",
        "",
        "Each section is one sitting at one scale on one data shape: every strategy "
        "ran the contest's procedure in interleaved rounds (rotated each round), "
        "every run checked by the oracle, its noise measured during each job. Ratios "
        "are taken round by round within the sitting. Newest sitting first; the "
        "sittings a newer one of the same scale, shape and codec replaced follow, "
        "kept whole (another machine's ratios are evidence too, not to be pooled).",
        "",
    ]
    latest = sorted(newest(runs).values(), key=lambda g: g[0].sitting or "", reverse=True)
    for g in latest:
        lines += render_summary(summarize(g))
    shown = {(g[0].sitting, g[0].scale, g[0].data_shape) for g in latest}
    earlier = [g for g in groups(runs) if (g[0].sitting, g[0].scale, g[0].data_shape) not in shown]
    if earlier:
        lines += ["# Earlier sittings", ""]
    for g in sorted(earlier, key=lambda g: g[0].sitting or "", reverse=True):
        head, *rest = render_summary(summarize(g))
        lines += ["#" + head, *rest]
    return "\n".join(lines)


def num(v: float | None, digits: int = 1) -> str:
    """A figure with thousands separators, or "-" where none was measured."""
    return "-" if v is None else f"{v:,.{digits}f}"


def render_summary(s: SittingSummary) -> list[str]:
    planned = f" of {s.rounds_planned}" if s.rounds_planned else ""
    lines = [
        f"## Scale {s.scale:g}, {s.shape}, codec: {s.codec}"
        if s.scale is not None
        else f"## {s.shape}, codec: {s.codec}",
        "",
        f"Sitting `{s.sitting}`: {s.rounds_run}{planned} round(s), strategies in rotated "
        f"order each round"
        + (f" ({', '.join(s.once)} in the first round only)" if s.once else "")
        + f"; commit {', '.join(s.commits)}"
        + ("; resumed on the same commit and machine" if s.resumed else "")
        + f"; CPU: {s.cpu}"
        + f". Full disclosure: [{disclosure_name(s.sitting)}]({disclosure_name(s.sitting)}).",
        "",
        f"| strategy | n | rows/core/s: median [interval] | write s | read s | peak tree GB "
        f"| {REFERENCE} / this |",
        "|---|---|---|---|---|---|---|",
    ]
    for row in s.rows:
        if row.score is None:
            score = "- (no quiet, correct run)"
        elif row.score.n < 2:
            score = f"{row.score.median:,.0f} (single run)"
        else:
            score = (
                f"{row.score.median:,.0f} [{row.score.low:,.0f}-{row.score.high:,.0f}] "
                f"({row.score.confidence:.0%})"
            )
        n = row.score.n if row.score else 0
        ratio = "-" if row.ratio is None else row.ratio.text()
        gb = None if row.peak_tree_bytes is None else row.peak_tree_bytes / 1e9
        lines.append(
            f"| {row.strategy} | {n} of {row.attempts} | {score} | {num(row.write_s)} "
            f"| {num(row.read_s)} | {num(gb, 2)} | {ratio} |"
        )
    ratios = s.peer_ratios
    lines.append("")
    if ratios:
        lines.append(
            f"Geometric mean of {REFERENCE} / each other strategy ({len(ratios)}"
            + ("; `:defaults` rows apart" if s.two_rows else "")
            + f"): {geometric_mean(ratios):.2f}x."
        )
    lines.append(
        "An interval is distribution-free (order statistics of the per-round ratios) at "
        "the confidence shown; `~` marks one that crosses 1, `single run` one round only."
    )
    lines += render_two_rows(s)
    if s.excluded:
        lines += ["", "Left out of the medians:", ""] + [f"- {e}" for e in s.excluded]
    return [*lines, ""]


def _score(v: Interval | None) -> str:
    if v is None:
        return "-"
    return f"{v.median:,.0f}" + (f" (n={v.n})" if v.n > 1 else " (single run)")


def render_two_rows(s: SittingSummary) -> list[str]:
    """Each peer at its tuned preset and at its format's documented defaults, from the
    same sitting (ClickBench's two rows); nothing when no `:defaults` row ran."""
    if not s.two_rows:
        return []
    lines = [
        "",
        "Two rows per format (ClickBench's): each peer's preset (tuned) and its format's "
        "documented defaults (`<strategy>:defaults`), from this sitting; `tuned / "
        "defaults` in the rounds both ran.",
        "",
        f"| strategy | tuned rows/core/s | defaults rows/core/s | tuned / defaults "
        f"| {REFERENCE} / tuned | {REFERENCE} / defaults |",
        "|---|---|---|---|---|---|",
    ]
    for t in s.two_rows:
        ratio = "-" if t.ratio is None else t.ratio.text()
        ref = ["-" if r.ratio is None else r.ratio.text() for r in (t.tuned, t.defaults)]
        lines.append(
            f"| {t.strategy} | {_score(t.tuned.score)} | {_score(t.defaults.score)} "
            f"| {ratio} | {ref[0]} | {ref[1]} |"
        )
    return lines
