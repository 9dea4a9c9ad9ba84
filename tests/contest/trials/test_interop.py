"""`contest bench interop`: its families (derived from the formats' registry, pinned
here to the hand list they replaced), its plan (every engine that reads a format reads
every other engine's table of it), its cells and page from real records, and one
format's matrix end to end with real engines (Spark's Delta and delta-rs) at a tiny
scale."""

import json

import pytest

from contest.benchmarks.registry import BENCHMARKS
from contest.cli.main import main
from contest.errors import ConfigError, UsageError
from contest.evaluation.strategies import STRATEGIES
from contest.peers import registry
from contest.results import registry as results
from contest.results.interop import COMPACTED, WRITTEN, InteropRecord
from contest.trials.interop import (
    Family,
    InteropBench,
    cells,
    families,
    reader_preset,
    render_matrix,
)
from tests.support.combined_cases import write_combined
from tests.support.config import cli

# The hand list the registry's declarations replaced (issue 75), a family a line (key:
# name | writers | readers | compacted, in order): the derivation gives it exactly.
HAND_LIST = """
delta: Delta Lake | delta-merge delta-dv delta-rs | delta-merge delta-rs | delta-dv
iceberg: Apache Iceberg | iceberg-mor iceberg-dv pyiceberg | iceberg-mor pyiceberg | iceberg-dv
paimon: Apache Paimon | paimon-agg | paimon-agg pypaimon | paimon-agg
hudi: Apache Hudi | hudi-mor | hudi-mor hudi-rs | hudi-mor
lakesoul: LakeSoul | optimized lakesoul-py | optimized lakesoul-py | optimized
"""


def _line(fam: Family) -> str:
    names = [" ".join(n) for n in (fam.writers, fam.readers, fam.compacted)]
    return f"{fam.key}: {fam.name} | " + " | ".join(names)


def test_the_families_derived_from_the_registry_are_the_hand_list():
    assert "\n".join(_line(f) for f in families()) == HAND_LIST.strip()
    formats = next(o for o in InteropBench.all_options() if o.flag == "--formats")
    assert formats.help == (
        "formats to cross-read (default: all: delta, iceberg, paimon, hudi, lakesoul)"
    )
    formats.check(["delta", "lakesoul"])
    with pytest.raises(UsageError, match="--formats must be one of delta, iceberg, paimon"):
        formats.check(["orc"])


def test_an_interop_part_is_declared_whole_or_refused():
    family = registry.FormatFamily("toy", "Toy")
    compacted, reads = registry.Interop(compacted=True), registry.Interop(reads=True)
    cases = [
        (registry.Strategy("toy-a", {}, interop=compacted), family, "writes no table"),
        (registry.Strategy("toy-a", {}, interop=reads), None, "has no family"),
        (registry.Strategy("toy-a", {}), registry.FormatFamily("delta", "Delta"), "named other"),
    ]
    for strategy, fam, why in cases:
        impl = registry.Implementation("toy", "Toy", "", strategies=(strategy,), family=fam)
        with pytest.raises(ConfigError, match=why):
            registry.register(impl)
    both = registry.Implementation("toy", "Toy", "", strategies=cases[2][:1], interop=reads)
    with pytest.raises(ConfigError, match="interop parts go on its strategies"):
        registry.register(both)
    assert "toy" not in registry.IMPLEMENTATIONS


def test_every_native_engine_is_in_the_matrix_and_every_reader_has_a_config():
    natives = {n for n, i in registry.IMPLEMENTATIONS.items() if i.runtime is registry.NATIVE}
    readers = {r for f in families() for r in f.readers}
    assert natives <= readers  # hudi-rs and pypaimon read; the rest read and write
    for fam in families():
        for name in (*fam.writers, *fam.readers):
            assert reader_preset(name).get("peer.format") or name == "optimized"
        assert set(fam.writers) <= set(STRATEGIES)
    assert reader_preset("hudi-rs") == {"peer.format": "hudi-rs"}
    assert BENCHMARKS["interop"] is InteropBench
    assert results.by_stem("interop").name == "interop"


def test_cells_put_the_writers_own_read_first_and_compacted_tables_after_it():
    delta = next(f for f in families() if f.key == "delta")
    got = [(w, r, state) for _, w, r, state in cells([delta])]
    assert got == [
        ("delta-merge", "delta-merge", WRITTEN),
        ("delta-merge", "delta-rs", WRITTEN),
        ("delta-dv", "delta-dv", WRITTEN),  # a table with deletion vectors (not a cell)
        ("delta-dv", "delta-merge", WRITTEN),
        ("delta-dv", "delta-rs", WRITTEN),
        ("delta-dv", "delta-merge", COMPACTED),  # the same table after OPTIMIZE
        ("delta-dv", "delta-rs", COMPACTED),
        ("delta-rs", "delta-rs", WRITTEN),
        ("delta-rs", "delta-merge", WRITTEN),
    ]
    for fam in families():
        assert set(fam.compacted) <= set(fam.writers)


def _rec(writer, reader, verdict, wrong=None, error="", sitting="s1", state=WRITTEN):
    return InteropRecord.from_dict(
        {
            "family": "Delta Lake",
            "writer": writer,
            "state": state,
            "reader": reader,
            "verdict": verdict,
            "wrong_keys": wrong,
            "error": error,
            "scale": 0.001,
            "sitting": sitting,
        }
    )


def test_the_page_is_a_matrix_of_the_newest_cells():
    records = [
        _rec("a", "a", "wrong", 3, sitting="s0"),
        _rec("a", "a", "exact"),
        _rec("a", "b", "wrong", 12),
        _rec("b", "b", "exact"),
        _rec("b", "a", "refused", error="no | table"),
        _rec("a", "b", "exact", state=COMPACTED),
        _rec("a", "a", "exact", state=COMPACTED),
    ]
    lines = render_matrix(records)
    assert lines[:3] == ["## Delta Lake", "", "| written by \\ read by | a | b |"]
    assert "| a | exact | wrong (12 keys) |" in lines
    assert "| b | refused: no \\| table | exact |" in lines
    assert lines[-2] == "| a, compacted | exact | exact |"  # its own row, after b's
    assert _rec("a", "b", "exact").state == WRITTEN  # records before the state field
    page = InteropBench().render(records)
    assert "Cells from sitting(s) `s1`; scale 0.001." in page  # s0's cell is replaced


def test_hudi_rs_has_no_writer_one_line(cfg, tmp_path, capsys):
    folder = tmp_path / "data"
    write_combined(folder)
    base = cli(cfg, "--set", "peer.format=hudi-rs", "--set", "spark.master=local[1]")
    code = main([*base, "write", "--data", str(folder), "--table", str(tmp_path / "t")])
    out, err = capsys.readouterr()
    assert code != 0 and "hudi-rs (hudi 0.5.0) has no writer API: it reads only" in err
    assert json.loads(out.strip().splitlines()[-1])["ok"] is False


@pytest.mark.slow
def test_delta_tables_cross_read_exact(cfg, tmp_path, capsys):
    """Spark's Delta (copy-on-write, and with deletion vectors, then compacted) and delta-rs
    each write the contract cases, each reads the other's."""
    folder = tmp_path / "data"
    write_combined(folder)
    args = ["bench", "interop", "--formats", "delta", "--data", str(folder), "--cores", "2"]
    args += ["--work", str(tmp_path / "work"), "--results", str(tmp_path / "res")]
    assert main(cli(cfg, *args)) == 0, capsys.readouterr().err[-3000:]
    got = results.by_stem("interop").read(tmp_path / "res" / "interop.jsonl")
    cells_ = {(r.table, r.reader): r.cell for r in got}
    # delta-rs 1.6.6 reads no table whose protocol names deletion vectors, also after
    # OPTIMIZE (the reader feature stays in the protocol): refused, its own words.
    no_dv = (
        "refused: _internal.DeltaProtocolError: The table has set these reader features: "
        "{'deletionVectors'} but these are not yet supported by the deltalake reader."
    )
    assert cells_ == {
        ("delta-merge", "delta-merge"): "exact",
        ("delta-merge", "delta-rs"): "exact",
        ("delta-dv", "delta-merge"): "exact",
        ("delta-dv", "delta-rs"): no_dv,
        ("delta-dv, compacted", "delta-merge"): "exact",
        ("delta-dv, compacted", "delta-rs"): no_dv,
        ("delta-rs", "delta-rs"): "exact",
        ("delta-rs", "delta-merge"): "exact",
    }
    page = (tmp_path / "res" / "interop.md").read_text()
    assert "| delta-rs | exact | exact |" in page
    assert "| delta-dv, compacted | exact | refused: " in page
