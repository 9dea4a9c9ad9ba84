"""The command line behaves like the tools around it: --version, help with defaults,
shared options on either side of the command, one line and the right exit code for
every failure a user can cause."""

from __future__ import annotations

import pytest

from contest import __version__
from contest.cli.main import build_parser, main


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
