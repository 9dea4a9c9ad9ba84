"""The phase model of a workload file: expansion of [longevity], and one-line errors."""

import os

import pytest

from contest.cli.main import main
from contest.data.workload import named
from contest.errors import ConfigError
from contest.workload.plan import Step, build_plan, load_plan, parse_batches


def kinds(steps):
    return [(s.kind, s.batches) for s in steps]


def test_no_phases_is_the_contests_procedure():
    assert kinds(build_plan({}, 3, "w")) == [("upsert", (0, 1, 2)), ("merge", ()), ("read", ())]


def test_longevity_rounds_cover_the_remaining_batches_and_compact_every_m_rounds():
    data = {
        "phase": [{"kind": "upsert", "batches": 0}, {"kind": "read"}],
        "longevity": {"upsert": 2, "compact_every": 2},
    }
    steps = build_plan(data, 8, "w")  # batches 1..7: rounds 1-2, 3-4, 5-6, 7
    ups = [s.batches for s in steps if s.kind == "upsert"]
    assert ups == [(0,), (1, 2), (3, 4), (5, 6), (7,)]
    assert [s.kind for s in steps].count("read") == 5
    compacts = [i for i, s in enumerate(steps) if s.kind == "compact"]
    assert len(compacts) == 1 and steps[compacts[0]].round == 2  # not after the last round
    assert [s.kind for s in steps[-3:]] == ["upsert", "merge", "read"]


def test_never_compact_and_no_merge():
    steps = build_plan({"longevity": {"upsert": 3, "merge": False}}, 6, "w")
    assert [s.kind for s in steps] == ["upsert", "read", "upsert", "read"]


def test_batch_specs():
    assert parse_batches(4, "w") == (4,)
    assert parse_batches("2-5", "w") == (2, 3, 4, 5)
    assert parse_batches([1, 3], "w") == (1, 3)
    for bad in ("5-2", "x", [], True, 1.5):
        with pytest.raises(ConfigError):
            parse_batches(bad, "w")


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"phase": [{"kind": "scan"}]}, "kind 'scan' is not one of"),
        ({"phase": [{"kind": "upsert"}]}, "batches missing"),
        ({"phase": [{"kind": "read", "batches": 1}]}, "unknown key(s) batches"),
        ({"phase": [{"kind": "read"}]}, "nothing upserted yet"),
        ({"phase": [{"kind": "upsert", "batches": "0-9"}, {"kind": "read"}]}, "not one of"),
        (
            {"phase": [{"kind": "upsert", "batches": "0-1"}, {"kind": "upsert", "batches": 1}]},
            "upserted twice",
        ),
        (
            {"phase": [{"kind": "upsert", "batches": 2}, {"kind": "upsert", "batches": 1}]},
            "upsert in order",
        ),
        (
            {"phase": [{"kind": "upsert", "batches": "0-1"}, {"kind": "read", "as_of": 3}]},
            "as_of 3 is past",
        ),
        ({"phase": [{"kind": "upsert", "batches": 0, "threads": 0}]}, "threads: a whole number"),
        ({"phase": [{"kind": "upsert", "batches": 0}]}, "never read"),
        ({"longevity": {"compact_every": 2}}, "longevity.upsert: missing"),
        ({"longevity": {"upsert": 1, "every": 2}}, "unknown key(s) every"),
    ],
)
def test_bad_phases_are_one_line_errors(data, message):
    with pytest.raises(ConfigError) as err:
        build_plan(data, 4, "my.toml")
    assert message in str(err.value) and "\n" not in str(err.value)
    assert str(err.value).startswith("my.toml")


def test_named_workloads_have_valid_plans():
    from contest.data.workload import workload_settings

    for name in named():
        batches = workload_settings(name).get("workload.batches", 11)
        steps = load_plan(name, batches)
        assert steps and all(isinstance(s, Step) for s in steps)
    cdc = load_plan("cdc-trickle", 121)
    assert sum(s.kind == "compact" for s in cdc) == 3  # 12 rounds, every 3rd but the last
    assert any(s.kind == "concurrent" for s in load_plan("append-mostly", 11))


def test_cli_refuses_a_bad_phase_file_with_exit_2(tmp_path, capsys):
    bad = tmp_path / "bad.toml"
    bad.write_text('[workload]\nbatches = 3\n[[phase]]\nkind = "scan"\n')
    code = main(["workload", "run", str(bad), "--work", str(tmp_path)])
    err = capsys.readouterr().err
    assert code == 2
    assert "kind 'scan' is not one of" in err and len(err.strip().splitlines()) == 1


def test_cli_refuses_more_cores_than_the_machine_has(tmp_path, capsys):
    """Each job is local[--cores]: above the machine's cores the score would divide by
    cores it has not got, so the run is refused before any data or table."""
    spec = tmp_path / "ok.toml"
    spec.write_text('[workload]\nbatches = 3\n[[phase]]\nkind = "upsert"\nbatches = "0-2"\n')
    over = str((os.cpu_count() or 1) + 1)
    code = main(["workload", "run", str(spec), "--work", str(tmp_path), "--cores", over])
    err = capsys.readouterr().err
    assert code == 2 and f"--cores {over}: this machine has" in err
    assert not any(tmp_path.glob("data*"))  # refused before any data was made
