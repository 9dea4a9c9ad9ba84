"""`contest`: the command line, one module per group of commands."""

from contest.cli.main import main

__all__ = ["main"]
