"""A workload lane's long-lived application (contest/cli/application.py), driven over its
socket as the runner drives it: a real child process (`python -m contest.workload`, no
Spark: these commands fail or answer before a session starts), each command's output in
its own log, its exit code and seconds in the reply, a bad request answered and the
application going on, and `stop` ending it."""

from __future__ import annotations

import json
import socket
import subprocess
import sys

import pytest

from contest.cli.application import address_of, split_argv
from tests.support.config import cli


def test_its_own_arguments_split_from_what_every_command_gets():
    prefix, address = split_argv(["--config", "c.toml", "--connect", "127.0.0.1:4040", "-q"])
    assert prefix == ["--config", "c.toml", "-q"] and address == ("127.0.0.1", 4040)
    assert address_of("::1:80") == ("::1", 80)
    for bad in (["--config", "c.toml"], ["--connect"]):
        with pytest.raises(ValueError, match="--connect HOST:PORT is required"):
            split_argv(bad)
    with pytest.raises(ValueError, match="HOST:PORT, not 'nowhere'"):
        address_of("nowhere")


def test_commands_run_one_after_another_each_into_its_own_log(cfg, tmp_path):
    with socket.create_server(("127.0.0.1", 0)) as listener:
        listener.settimeout(60)
        port = listener.getsockname()[1]
        argv = [*cli(cfg), "--connect", f"127.0.0.1:{port}"]
        app = subprocess.Popen(
            [sys.executable, "-m", "contest.workload", *argv],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
        )
        try:
            conn, _ = listener.accept()
        except TimeoutError:
            app.kill()
            raise AssertionError(app.communicate()[0].decode()[-2000:]) from None
    with conn, conn.makefile("rwb") as stream:
        hello = json.loads(stream.readline())
        assert hello["pid"] == app.pid

        def ask(*command: str, log: str) -> dict:
            request = {"argv": list(command), "log": str(tmp_path / log)}
            stream.write(json.dumps(request).encode() + b"\n")
            stream.flush()
            return dict(json.loads(stream.readline()))

        # Bad input: the command's one-line error in its own log, exit 2.
        missing = tmp_path / "no-such-data"
        reply = ask("write", "--data", str(missing), "--table", str(tmp_path / "t"), log="1.log")
        lines = (tmp_path / "1.log").read_text().strip().splitlines()
        assert reply["exit"] == 2 and reply["seconds"] >= 0
        assert len(lines) == 1 and lines[0].startswith("contest: ") and str(missing) in lines[0]
        # argparse's own exits (a bad flag, --help) are answered too, and it goes on.
        assert ask("read", "--table", "t", log="2.log")["exit"] == 2
        assert "arguments are required: --out" in (tmp_path / "2.log").read_text()
        assert ask("compact", "--help", log="3.log")["exit"] == 0
        assert "--allow-gaps" in (tmp_path / "3.log").read_text()
        stream.write(b'{"stop": true}\n')
        stream.flush()
        assert stream.readline() == b""  # it closed its side
    assert app.wait(timeout=60) == 0
    assert app.stdout is not None and b"required: --out" not in app.stdout.read()
