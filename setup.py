"""Package discovery for the wheel; everything else is in pyproject.toml.

pyproject's `packages.find` cannot add a package mapped from another folder, and the schema
files ship as `meta.sql` from sql/ (pyproject's package-dir), so the list is built here:
every package under contest/ and meta/, found, plus that one."""

from setuptools import find_packages, setup

setup(
    packages=[
        *find_packages(include=["contest", "contest.*", "meta", "meta.*"]),
        "meta.sql",
        "contest.workloads",
    ]
)
