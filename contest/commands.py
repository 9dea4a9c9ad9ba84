"""Subcommands beyond the basics: each registers its parser and handler here."""

from __future__ import annotations

import argparse


def register(sub: argparse._SubParsersAction) -> None:
    """Add the data, check and pipeline commands to the `contest` parser."""
