"""The registry is the one list: a toy format registered with one `register(...)` call
shows up everywhere formats and strategies are listed (the CLI's choices, `bench peers`,
`bench stream`, `contest packages`, the strategies and their `:defaults`, sweeps, the
merge engines), with no other edit; unregistered, it is gone from all of them."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from types import SimpleNamespace

import pytest

from contest.benchmarks.peers.bench import STRATEGY_LIST
from contest.benchmarks.registry import BENCHMARKS
from contest.cli.main import build_parser, main
from contest.config import load_config
from contest.data import merge_engines, operators
from contest.errors import ConfigError, UsageError
from contest.evaluation import strategies
from contest.evaluation.sweep import load_sweep
from contest.peers import formats, registry
from contest.peers.base import PeerFormat
from contest.peers.registry import Implementation, Strategy, StreamTable
from contest.trials.stream.boundary import commits


class Toy(PeerFormat):
    name = "toy"
    marker = "_toy_log"

    def commit_records(self, table: Path) -> int:
        return len(list((Path(table) / self.marker).glob("*.json")))


TOY = Toy()
TOY_IMPL = Implementation(
    name=TOY.name,
    table_format="Toy 0.1",
    runs_on="Spark (a toy)",
    peer=TOY,
    packages={"toy": ("org.example:toy-spark_2.12:0.1",)},
    strategies=(
        Strategy(
            "toy-fast",
            {"peer.format": "toy", "spark.shuffle_partitions": 3},
            defaults={"peer.format": "toy"},
        ),
    ),
    stream="toy",
    commit_records=lambda t: TOY.commit_records(t.path),
    merge_engine=merge_engines.MergeEngine(
        "toy", "the toy's merge", native={operators.SUM_ALL: "plus"}
    ),
)


@pytest.fixture
def toy():
    registry.register(TOY_IMPL)
    try:
        yield TOY_IMPL
    finally:
        registry.unregister(TOY_IMPL.name)


def _subcommand(parser: argparse.ArgumentParser, *path: str) -> argparse.ArgumentParser:
    for name in path:
        action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
        parser = action.choices[name]
    return parser


def test_a_toy_format_is_in_every_list(toy, tmp_path, capsys):
    # The strategies and their :defaults rows.
    assert strategies.preset("toy-fast")["spark.shuffle_partitions"] == 3
    assert strategies.preset("toy-fast:defaults") == {"peer.format": "toy"}
    assert "toy-fast:defaults" in strategies.strategy_names(variants=True)
    # peer.format takes it, and the config checks its format's options.
    cfg = load_config(
        env={}, overrides={"state_dir": str(tmp_path)}, preset=TOY_IMPL.strategies[0].preset
    )
    assert formats.of(cfg) is TOY
    assert formats.coordinates(cfg) == ("org.example:toy-spark_2.12:0.1",)
    # The CLI's choices: the strategies of evaluate and compare, stream run's formats.
    parser = build_parser()
    assert "toy-fast" in _subcommand(parser, "evaluate").format_help()
    stream_format = next(
        a for a in _subcommand(parser, "stream", "run")._actions if a.dest == "format"
    )
    assert "toy" in stream_format.choices
    # bench peers takes its strategies; bench stream its stream.
    STRATEGY_LIST.check(["toy-fast", "toy-fast:defaults"])
    stream_bench = BENCHMARKS["stream"]()
    stream_bench.check(argparse.Namespace(**{**_defaults(stream_bench), "formats": ["toy"]}))
    # The kill trials count its own commit records.
    table = tmp_path / "t"
    (table / "_toy_log").mkdir(parents=True)
    (table / "_toy_log" / "0.json").write_text("{}")
    stage = SimpleNamespace(table_path=table, conn=None, name="t", cfg=cfg)
    assert commits(stage, "toy") == 1
    assert TOY_IMPL.commit_records is not None
    assert TOY_IMPL.commit_records(StreamTable(table)) == 1
    # contest packages lists its JVM set.
    assert main(["packages", "list", "--json"]) == 0
    sets = {s["name"]: s for s in json.loads(capsys.readouterr().out)["sets"]}
    assert sets["toy"]["coordinates"] == ["org.example:toy-spark_2.12:0.1"]
    # A sweep may name its strategy.
    sweep = tmp_path / "toy.toml"
    sweep.write_text(
        'strategy = "toy-fast"\nscale = 0.01\n[grid]\n"spark.shuffle_partitions" = [2, 4]\n'
    )
    assert load_sweep(sweep, env={}).strategy == "toy-fast"
    # Its merge engine refuses what it cannot express, in one line naming it.
    why = merge_engines.refusal({"c": operators.USE_LAST}, ("toy",), "peer format toy")
    assert why == (
        "peer format toy: merge operator UseLast (column c) is not expressible in the toy's merge"
    )
    assert merge_engines.refusal({"c": operators.SUM_ALL}, ("toy",), "peer format toy") is None


def test_unregistered_it_is_gone(toy):
    registry.unregister(TOY_IMPL.name)
    try:
        assert "toy-fast" not in strategies.STRATEGIES
        assert "toy" not in registry.stream_names()
        assert "toy" not in registry.package_sets()
        assert "toy" not in merge_engines.ENGINES
        with pytest.raises(ConfigError, match="peer.format: 'toy' is not one of"):
            formats.lookup("toy")
        with pytest.raises(UsageError, match="--strategies must be"):
            STRATEGY_LIST.check(["toy-fast"])
    finally:
        registry.register(TOY_IMPL)  # the fixture unregisters it


def test_a_name_registered_twice_is_refused(toy):
    with pytest.raises(ConfigError, match="registered already"):
        registry.register(TOY_IMPL)
    clash = Implementation(
        name="toy2", table_format="", runs_on="", strategies=(Strategy("toy-fast", {}),)
    )
    with pytest.raises(ConfigError, match="strategy 'toy-fast' is registered already"):
        registry.register(clash)
    assert "toy2" not in registry.IMPLEMENTATIONS


def test_every_strategy_belongs_to_one_implementation():
    for name in strategies.STRATEGIES:
        impl = registry.implementation_of(name)
        fmt = strategies.STRATEGIES[name].get("peer.format")
        assert (impl.peer.name if impl.peer else None) == fmt, name


def _defaults(bench) -> dict:
    return {o.dest: o.default for o in bench.all_options()}


def test_a_strategy_that_cannot_run_here_is_named_but_not_in_the_default_lists():
    # pypaimon cannot be installed beside the harness: evaluate names and refuses it
    # (tests/contest/peers/test_native_end_to_end.py), a default comparison leaves it out.
    impl = registry.IMPLEMENTATIONS["pypaimon"]
    assert impl.unavailable and "polars" in impl.unavailable
    assert strategies.is_strategy("pypaimon")
    available = registry.available_strategies()
    assert "pypaimon" not in available
    assert {"optimized", "delta-merge", "delta-rs"} <= set(available)
    assert available == [s for s in strategies.STRATEGIES if s != "pypaimon"]
    compare = build_parser().parse_args(["compare"])
    assert compare.strategies == available


def _impl(name: str, runtime: registry.Runtime = registry.SPARK, rank: int = 0) -> Implementation:
    return Implementation(name=name, table_format="", runs_on="", runtime=runtime, rank=rank)


def test_lists_show_the_spark_implementations_first_then_the_native_ones_by_rank():
    # A folder registers its Spark implementation and its native one together.
    registered = [
        _impl("a"),
        _impl("a-native", registry.NATIVE, rank=2),
        _impl("b"),
        _impl("b-native", registry.NATIVE, rank=1),
        _impl("c-native", registry.NATIVE, rank=2),
        _impl("c"),
    ]
    listed = [i.name for i in registry.listing_order(registered)]
    # Equal kinds and ranks keep the order they came in (a stable sort).
    assert listed == ["a", "b", "c", "b-native", "a-native", "c-native"]
    assert registry.listing_order([]) == []


def test_the_registry_lists_in_listing_order(toy):
    impls = registry.implementations()
    assert impls == registry.listing_order(registry.IMPLEMENTATIONS.values())
    kinds = [registry.RUNTIMES.index(i.runtime) for i in impls]
    assert kinds == sorted(kinds) and registry.NATIVE in {i.runtime for i in impls}
    # A Spark implementation registered after the native ones is listed before them.
    assert impls.index(TOY_IMPL) < min(
        impls.index(i) for i in impls if i.runtime is registry.NATIVE
    )
    names = [s for i in impls for s in (x.name for x in i.strategies)]
    assert list(registry.strategies()) == names
