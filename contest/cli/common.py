"""What every command module shares: how commands are declared, and small helpers.

Every subcommand is made by `command`, so each has a description, shows its
defaults, and accepts the shared options (`--config`, `--set`) after its name as
well as before it. The command-line conventions (README, "Command-line conventions")
live here: `ListAction` for every list option, `alias` for an old option spelling,
`config_default` for an option that sets a configuration key, `result` for the one
JSON object a command ends its stdout with.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import contest.data.workload  # registers the workload columns check; the named workloads
from contest.config import Config, get_key, load_config
from contest.errors import UsageError

Handler = Callable[[argparse.Namespace, Config], int]


class HelpFormatter(argparse.RawDescriptionHelpFormatter):
    """Descriptions keep their lines; options show their default when they have one."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        text = action.help or ""
        if isinstance(action, ListAction) and action.default:
            return text + f" (default: {','.join(str(v) for v in action.default)})"
        if "%(default)" in text or action.default in (None, False, argparse.SUPPRESS, []):
            return text
        if action.option_strings or action.nargs in (argparse.OPTIONAL, argparse.ZERO_OR_MORE):
            return text + " (default: %(default)s)"
        return text


def shared_options(top: bool) -> argparse.ArgumentParser:
    """`--config` and `--set`, accepted before the command (top) and after it."""
    p = argparse.ArgumentParser(add_help=False)
    suffix = "" if top else "_sub"
    p.add_argument(
        "--config",
        dest=f"config{suffix}",
        metavar="FILE",
        default=None,
        help="TOML configuration file",
    )
    p.add_argument(
        "--set",
        dest=f"overrides{suffix}",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override one configuration key, e.g. spark.master=local[2] (repeatable)",
    )
    return p


def command(
    sub: argparse._SubParsersAction,
    name: str,
    summary: str,
    description: str,
    handler: Handler | None = None,
) -> argparse.ArgumentParser:
    """A subcommand with the shared options, a description and its handler."""
    p = sub.add_parser(
        name,
        help=summary,
        description=description,
        formatter_class=HelpFormatter,
        parents=[shared_options(top=False)],
    )
    if handler is not None:
        p.set_defaults(handler=handler)
    return p


def group(
    sub: argparse._SubParsersAction, name: str, summary: str, description: str, dest: str
) -> argparse._SubParsersAction:
    """A command with actions of its own (`contest db up`)."""
    p = sub.add_parser(name, help=summary, description=description, formatter_class=HelpFormatter)
    return p.add_subparsers(dest=dest, metavar="ACTION", required=True)


def named_workloads() -> str:
    """The workloads shipped with the package, as the help texts name them: from the
    package's folder, never a hand list."""
    return ", ".join(contest.data.workload.named())


def workload_option(p: argparse.ArgumentParser) -> None:
    """`--workload NAME|FILE`: the data's shape (contest/data/workload.py), read by
    `config_from` into the configuration's `[workload]` section."""
    p.add_argument(
        "--workload",
        metavar="NAME|FILE",
        help=f"a named workload (workloads/*.toml: {named_workloads()}) "
        "or a TOML file with a [workload] table; "
        "default: the configuration's [workload], the contest's shape",
    )


KINDS: dict[object, str] = {int: "integers", float: "numbers"}


class ListAction(argparse.Action):
    """A list option: `--x a,b` and `--x a --x b` give the same list (the items
    stripped, empty ones dropped, each converted by `item`). Its value is a list, or
    the default when the flag is not given."""

    def __init__(
        self, option_strings: list[str], dest: str, item: Callable[[str], object] = str, **kw
    ) -> None:
        self.item = item
        super().__init__(option_strings, dest, **kw)

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: object,
        option_string: str | None = None,
    ) -> None:
        current = getattr(namespace, self.dest, None)
        items = [] if current is None or current is self.default else list(current)
        flag = option_string or self.dest
        for text in str(values).split(","):
            text = text.strip()
            if not text:
                continue
            span = re.fullmatch(r"(\d+)\s*-\s*(\d+)", text) if self.item is int else None
            if span:  # `0-7`, as a workload's phases spell a run of batches
                low, high = int(span.group(1)), int(span.group(2))
                if low > high:
                    raise UsageError(f"{flag}: {text} is an empty range (give A-B with A <= B)")
                items.extend(range(low, high + 1))
                continue
            try:
                items.append(self.item(text))
            except ValueError:  # one line and exit 2, as every bad input
                kind = KINDS.get(self.item, "values")
                if self.item is int:
                    kind += " or ranges A-B"
                raise UsageError(f"{flag}: not a list of {kind}: {values!r}") from None
        setattr(namespace, self.dest, items)


def alias(p: argparse.ArgumentParser, flag: str, dest: str) -> None:
    """An old spelling of an option, kept for scripts and left out of the help."""
    p.add_argument(flag, dest=dest, default=argparse.SUPPRESS, help=argparse.SUPPRESS)


def config_default(key: str) -> str:
    """`KEY, default VALUE`: the configuration key an option sets and its built-in
    value (a config file, the environment or --set may change it)."""
    value = get_key(Config(), key)
    shown = (
        "none" if value in ("", None) else str(value).lower() if isinstance(value, bool) else value
    )
    return f"{key}, default {shown}"


def result(report: Mapping[str, object], line: str | None = None) -> None:
    """A command's end: `line` for people on stderr, then `report` as the last line of
    stdout (one JSON object, for scripts)."""
    if line:
        say(line)
    print(json.dumps(report, default=str), flush=True)


def joined(items: Sequence[str] | None) -> str | None:
    """A list option's items as the comma list a configuration key holds."""
    return ",".join(items) if items else None


def pairs(items: Sequence[str], what: str) -> dict[str, str]:
    """`KEY=VALUE` arguments as a dict; anything else is a usage error naming it."""
    out = {}
    for item in items:
        if "=" not in item:
            raise UsageError(f"{what}: expected KEY=VALUE, got {item!r}")
        key, value = item.split("=", 1)
        out[key.strip()] = value.strip()
    return out


def absolute(text: str) -> str:
    """A path as Spark's JVM must see it: absolute (it may run in another folder)."""
    return text if "://" in text else str(Path(text).absolute())


def say(msg: str) -> None:
    """Progress for people, on stderr: stdout stays machine-readable."""
    print(msg, file=sys.stderr, flush=True)


@dataclass(frozen=True)
class ConfigSource:
    """Where the command's Config came from, to build variants of it (a strategy's
    preset under the user's file, environment and flags)."""

    file: str | None
    env: Mapping[str, str]
    overrides: Mapping[str, str]
    # A named workload's settings (`--workload`), or None.
    workload: Mapping[str, object] | None = None

    def load(self, preset: Mapping[str, object] | None = None) -> Config:
        return load_config(
            self.file, self.env, self.overrides, preset=preset, workload=self.workload
        )


def config_source(args: argparse.Namespace) -> ConfigSource:
    source = getattr(args, "config_source", None)
    if not isinstance(source, ConfigSource):
        raise RuntimeError("the command line did not record its configuration source")
    return source
