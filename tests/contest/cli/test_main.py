"""The command line behaves like the tools around it: --version, help with defaults,
shared options on either side of the command, one line and the right exit code for
every failure a user can cause."""

from __future__ import annotations

import argparse
import json
import re

import pytest

from contest import __version__
from contest.cli.common import ListAction
from contest.cli.main import build_parser, main
from tests.support.config import cli


def test_version(capsys):
    with pytest.raises(SystemExit) as info:
        main(["--version"])
    assert info.value.code == 0
    assert capsys.readouterr().out.strip() == f"contest {__version__}"


def _subparsers(parser):
    for action in parser._actions:
        if action.__class__.__name__ == "_SubParsersAction":
            yield from action.choices.items()


def test_every_command_has_a_description_and_shows_defaults():
    parser = build_parser()
    seen = 0
    stack = list(_subparsers(parser))
    while stack:
        name, sub = stack.pop()
        assert sub.description, f"{name}: no description"
        children = list(_subparsers(sub))
        stack.extend(children)
        seen += 1
    assert seen >= 20
    write_help = dict(_subparsers(parser))["evaluate"].format_help()
    assert "(default: optimized)" in write_help and "(default: 2022)" in write_help


def test_operator_help_lists_the_operators():
    text = dict(_subparsers(build_parser()))["read"].format_help()
    for op in ("SumAll", "UseLast", "UseLastNotNull", "UseLastNotNullNorNullString"):
        assert op in text


@pytest.mark.parametrize(
    "argv",
    [
        ["--set", "write.threads=2", "oracle", "--data", "/nonexistent", "--out", "x"],
        ["oracle", "--data", "/nonexistent", "--out", "x", "--set", "write.threads=2"],
    ],
)
def test_shared_options_before_or_after_the_command(argv, capsys):
    assert main(argv) == 2  # parsed either way; the missing folder is bad input
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "/nonexistent" in err


@pytest.mark.parametrize(
    "argv, needle",
    [
        (["--set", "nope.key=1", "db", "status"], "unknown configuration key: nope"),
        (["db", "status", "--set", "write.threads=zero"], "write.threads: expected an integer"),
        (["--config", "/nonexistent.toml", "db", "status"], "config file not found"),
        (["gen", "--scale", "-1", "--out", "/tmp/x"], "scale"),
        (["check", "--result", "/nonexistent"], "exactly one of --data"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(argv, needle, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("contest: ") and err.count("\n") == 1 and needle in err


def test_config_file_after_the_command_wins(tmp_path, capsys):
    cfg = tmp_path / "c.toml"
    cfg.write_text("[write]\nthreads = 0\n")
    assert main(["db", "status", "--config", str(cfg)]) == 2
    assert "write.threads: must be at least 1" in capsys.readouterr().err


@pytest.mark.parametrize(
    "url", ["localhost:5432/db", "jdbc:postgresql://db.example:port/lakesoul", "jdbc:mysql://h/d"]
)
def test_a_malformed_pg_url_is_bad_input(url, monkeypatch, capsys):
    monkeypatch.setenv("LAKESOUL_PG_URL", url)
    monkeypatch.setenv("LAKESOUL_PG_USERNAME", "u")
    monkeypatch.setenv("LAKESOUL_PG_PASSWORD", "p")
    assert main(["history", "--table", "t"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("contest: pg.url (LAKESOUL_PG_URL): ") and err.count("\n") == 1


@pytest.mark.pg
def test_a_wrong_password_says_authentication_failed_at_once(pg, monkeypatch, capsys):
    import time

    monkeypatch.setenv("LAKESOUL_PG_URL", f"jdbc:postgresql://{pg.host}:{pg.port}/{pg.database}")
    monkeypatch.setenv("LAKESOUL_PG_USERNAME", pg.username)
    monkeypatch.setenv("LAKESOUL_PG_PASSWORD", "not-" + pg.password)
    started = time.monotonic()
    assert main(["history", "--table", "t"]) == 1
    err = capsys.readouterr().err
    assert time.monotonic() - started < 10  # no retrying for pg.retry_seconds (30)
    assert err.count("\n") == 1 and "authentication failed for user" in err
    assert "cannot reach" not in err and "tried for" not in err


# -- the command-line conventions (README, "Command-line conventions") ------------------


def _commands(parser, prefix=()):
    """Every leaf command: (its words, its parser)."""
    for name, sub in _subparsers(parser):
        children = list(_subparsers(sub))
        if children:
            yield from _commands(sub, (*prefix, name))
        else:
            yield (*prefix, name), sub


def _options(sub):
    return [a for a in sub._actions if a.option_strings and a.help != argparse.SUPPRESS]


# Commands whose stdout is a report for people; --json prints one JSON object instead.
REPORTS = {
    ("check",),
    ("history",),
    ("vacuum",),
    ("meta", "merge"),
    ("packages", "list"),
    ("publish",),
}


def test_every_command_follows_the_static_conventions():
    parser = build_parser()
    commands = dict(_commands(parser))
    assert len(commands) >= 40
    for words, sub in commands.items():
        name = " ".join(words)
        assert sub.description and sub.format_help(), name
        for action in _options(sub):
            flags = "/".join(action.option_strings)
            assert action.help, f"{name} {flags}: no help"
            # A list takes `a,b` and the flag repeated: ListAction, never argparse's
            # append (but --set, whose values may hold commas).
            if isinstance(action, argparse._AppendAction):
                assert action.dest in ("overrides", "overrides_sub"), f"{name} {flags}"
            if re.search(r"comma|repeat", action.help) and action.dest not in (
                "overrides",
                "overrides_sub",
            ):
                assert isinstance(action, ListAction), f"{name} {flags}: a list, not ListAction"
            # An option setting a configuration key shows the key's default.
            for key in re.findall(r"\((\w+\.\w+)[,)]", action.help):
                assert f"({key}, default " in action.help, f"{name} {flags}: {key}'s default"
            # Where results go is --results; --out names a thing a command makes.
            if action.dest == "results":
                assert action.option_strings == ["--results"], f"{name} {flags}"
    for words in REPORTS:
        assert "--json" in {o for a in commands[words]._actions for o in a.option_strings}, words
    # rollback beside history; the old spelling runs the same handler.
    assert commands[("rollback",)].get_default("handler") is commands[
        ("meta", "rollback")
    ].get_default("handler")


def test_list_options_take_commas_and_repeated_flags_alike():
    samples = {int: ("1,2", ["1", "2"]), float: ("0.5, 1", ["0.5", "1"])}
    seen = 0
    for words, sub in _commands(build_parser()):
        for action in _options(sub):
            if not isinstance(action, ListAction):
                continue
            joined, apart = samples.get(action.item, ("a=1,b=2", ["a=1", "b=2"]))
            one, many = argparse.Namespace(), argparse.Namespace()
            for ns in (one, many):
                setattr(ns, action.dest, action.default)
            action(sub, one, joined, action.option_strings[0])
            for text in apart:
                action(sub, many, text, action.option_strings[0])
            assert getattr(one, action.dest) == getattr(many, action.dest), words
            assert len(getattr(one, action.dest)) == 2, words
            seen += 1
    assert seen >= 10
    # On a real command line, and the default replaced, not extended.
    args = build_parser().parse_args(["compare", "--strategies", "optimized,baseline-mor"])
    again = build_parser().parse_args(
        ["compare", "--strategies", "optimized", "--strategies", "baseline-mor"]
    )
    assert args.strategies == again.strategies == ["optimized", "baseline-mor"]
    only = build_parser().parse_args(["write", "--data", "d", "--table", "t", "--only", "0,3"])
    assert only.only == [0, 3]


def test_a_bad_list_item_is_one_line_and_exit_2(capsys):
    assert main(["write", "--data", "d", "--table", "t", "--only", "1,x"]) == 2
    err = capsys.readouterr().err
    assert err == "contest: --only: not a list of integers or ranges A-B: '1,x'\n"


@pytest.mark.parametrize(
    "words, argv",
    [(("bench", "read"), []), (("meta", "bench"), []), (("sweep",), ["s.toml"])],
)
def test_the_old_out_spelling_still_parses_hidden(words, argv):
    parser = build_parser()
    assert parser.parse_args([*words, *argv, "--out", "x"]).results == "x"
    assert parser.parse_args([*words, *argv, "--results", "x"]).results == "x"
    assert "--out" not in dict(_commands(parser))[words].format_help()


def test_rollback_and_its_old_spelling_parse_alike():
    argv = ["--table", "t", "--to-version", "1", "--dry-run"]
    new, old = (
        build_parser().parse_args(["rollback", *argv]),
        build_parser().parse_args(["meta", "rollback", *argv]),
    )
    assert (new.table, new.to_version, new.dry_run) == (old.table, old.to_version, old.dry_run)
    assert new.handler is old.handler


def test_write_help_shows_each_config_keys_default():
    text = " ".join(dict(_commands(build_parser()))[("write",)].format_help().split())
    for shown in (
        "(write.threads, default 4)",
        "(table.hash_buckets, default 4)",
        "(write.repartition, default 8)",
        "(write.big_file_bytes, default 0)",
        "(write.codec, default none)",
        "(write.drop_null_keys, default false)",
    ):
        assert shown in text


def _last_json(out: str) -> dict:
    return json.loads(out.strip().splitlines()[-1])


def test_status_commands_print_json_and_exit_1_when_down(tmp_path, monkeypatch, capsys):
    state = ["--set", f"state_dir={tmp_path / 'state'}"]
    for argv in (["db", "status"], ["s3", "status"], ["cluster", "status"]):
        assert main([*state, *argv]) == 1, argv
        out, err = capsys.readouterr()
        assert _last_json(out)["running"] is False, argv
        assert "not" in err, argv  # a line for people, on stderr
    # An external server that does not answer: down, at once (no retrying).
    monkeypatch.setenv("LAKESOUL_PG_URL", "jdbc:postgresql://127.0.0.1:1/x")
    monkeypatch.setenv("LAKESOUL_PG_USERNAME", "u")
    monkeypatch.setenv("LAKESOUL_PG_PASSWORD", "p")
    assert main([*state, "db", "status"]) == 1
    status = _last_json(capsys.readouterr().out)
    assert status["running"] is False and "cannot reach" in status["error"]


@pytest.mark.pg
def test_db_status_exits_0_when_up(pg, cfg, capsys):
    assert main(cli(cfg, "db", "status")) == 0
    assert _last_json(capsys.readouterr().out)["running"] is True


@pytest.mark.spark
@pytest.mark.pg
def test_job_commands_end_stdout_with_one_json_object(spark, pg, cfg, tmp_path, capsys):
    data, table, out = tmp_path / "d", tmp_path / "conv", tmp_path / "r"
    assert main(["gen", "--scale", "0.0001", "--out", str(data)]) == 0
    assert _last_json(capsys.readouterr().out)["files"] == 11
    write = cli(cfg, "write", "--data", str(data), "--table", str(table), "--replace")
    write += ["--only", "0,1"]
    assert main([*write, "--only", "2"]) == 0
    written, err = capsys.readouterr()
    report = _last_json(written)  # the report on stdout; the summary for people on stderr
    assert report["spark_cores"] >= 1 and len(written.strip().splitlines()) == 1
    assert "wrote" in err
    assert main(cli(cfg, "rollback", "--table", "conv", "--to-version", "1", "--dry-run")) == 0
    dry = _last_json(capsys.readouterr().out)
    assert dry["dry_run"] and len(dry["removed"]) == 1 and dry["partition_version"] is None
    assert main(cli(cfg, "meta", "rollback", "--table", "conv", "--to-version", "1")) == 0
    rolled = _last_json(capsys.readouterr().out)
    assert len(rolled["removed"]) == 1 and rolled["partition_version"] is not None
    assert main(cli(cfg, "meta", "merge", "--table", "conv", "--json")) == 0  # a report
    assert _last_json(capsys.readouterr().out)
    assert main(cli(cfg, "read", "--table", "conv", "--out", str(out))) == 0
    assert _last_json(capsys.readouterr().out)["rows"] > 0


def test_rough_edges_are_one_line_each(tmp_path, capsys):
    """`gen --out FILE` was a traceback; `evaluate --strategy nosuch` six lines of usage
    where `compare --strategies optimized,nosuch` gave one; `--only 0-7` was refused."""
    existing = tmp_path / "README.md"
    existing.write_text("mine")
    assert main(["gen", "--scale", "0.0001", "--out", str(existing)]) == 2
    err = capsys.readouterr().err
    assert (
        err
        == f"contest: --out {existing}: a file, not a folder: give a folder for the batch files\n"
    )
    assert existing.read_text() == "mine"
    lines = []
    for argv in (
        ["evaluate", "--strategy", "nosuch"],
        ["compare", "--strategies", "optimized,nosuch"],
    ):
        assert main(argv) == 2
        lines.append(capsys.readouterr().err)
    assert lines[0] == lines[1] and lines[0].startswith("contest: unknown strategy nosuch: ")
    assert lines[0].count("\n") == 1
    only = build_parser().parse_args(["write", "--data", "d", "--table", "t", "--only", "0-3,6-7"])
    assert only.only == [0, 1, 2, 3, 6, 7]
    assert main(["write", "--data", "d", "--table", "t", "--only", "5-2"]) == 2
    assert "--only: 5-2 is an empty range" in capsys.readouterr().err


# Commands that print without a server or Spark: the reader of their stdout gone.
PIPED = [
    ["packages", "list"],
    ["packages", "list", "--json"],
    ["db", "status"],
    ["--help"],
    ["packages", "fetch", "--help"],
]


@pytest.mark.parametrize("argv", PIPED, ids=" ".join)
def test_a_closed_pipe_ends_a_command_quietly(argv, tmp_path):
    """`contest packages list | grep -q ...`: grep leaves at its first match; contest
    stops without a BrokenPipeError traceback, with SIGPIPE's exit code."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    read, write = os.pipe()
    os.close(read)  # the reader is gone before the first write
    try:
        proc = subprocess.run(
            [str(Path(sys.executable).with_name("contest")), *argv],
            stdout=write,
            stderr=subprocess.PIPE,
            text=True,
            cwd=tmp_path,
            timeout=120,
        )
    finally:
        os.close(write)
    assert "Traceback" not in proc.stderr and "BrokenPipeError" not in proc.stderr
    assert "Exception ignored" not in proc.stderr
    assert proc.returncode in (0, 141), proc.stderr
    if argv[0] == "packages" and argv[1] == "list":
        assert proc.returncode == 141 and proc.stderr == ""


def test_every_command_meets_a_closed_pipe_at_the_one_boundary(monkeypatch, capsys):
    """Every command's output goes through main(): with stdout a pipe nobody reads, each
    (its help here) ends in an exit code, never an exception out of main()."""
    import os

    for words, _ in _commands(build_parser()):
        read, write = os.pipe()
        os.close(read)
        out = os.fdopen(write, "w")
        monkeypatch.setattr("sys.stdout", out)
        try:
            code = main([*words, "--help"])
        except SystemExit as done:  # argparse's own exit after printing help
            code = done.code
        finally:
            monkeypatch.undo()
            try:
                out.close()
            except BrokenPipeError:
                pytest.fail(f"{' '.join(words)}: output left unflushed past main()")
        assert code in (0, 141), words
    assert "Traceback" not in capsys.readouterr().err
