"""LakeSoul upsert / merge-on-read benchmark harness (CCF BDCI 2022 data-lake contest)."""

__version__ = "0.1.0"
