"""`contest` commands run one after another in a child process holding one Spark session
(a peer format's jars and start settings are fixed when its JVM starts, so a test of
one format cannot share the test process's session). Each command finds the session
running and uses it, as it would its own.

usage: python -m tests.support.contest_child CONFIG.toml COMMANDS.json
COMMANDS: a list of argument lists (`--config CONFIG.toml` is added to each); prints one
JSON line: [{"code": exit code, "report": the command's last JSON line or null}, ...],
stopping after the first command that fails.
"""

from __future__ import annotations

import contextlib
import io
import json
import sys
from pathlib import Path

from contest.cli.main import main as contest_main
from contest.config import load_config
from contest.infra.spark import build_session


def last_json(text: str) -> dict | None:
    for line in reversed(text.splitlines()):
        if line.startswith("{"):
            return dict(json.loads(line))
    return None


def main(config_file: str, commands_file: str) -> int:
    cfg = load_config(config_file)
    commands = json.loads(Path(commands_file).read_text())
    packages: tuple[str, ...] = ()
    session_cfg = cfg
    if cfg.peer.format:
        from contest.peers import formats
        from contest.peers.write import session_config

        packages, session_cfg = formats.coordinates(cfg), session_config(cfg)
    spark = build_session(session_cfg, "contest-child", packages)
    out = []
    try:
        for argv in commands:
            buffer = io.StringIO()
            with contextlib.redirect_stdout(buffer):
                code = contest_main(["--config", config_file, *argv])
            out.append({"code": code, "report": last_json(buffer.getvalue())})
            if code != 0:
                break
    finally:
        spark.stop()
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
