"""Peer table formats (Delta Lake, Apache Iceberg, Apache Hudi) on the contest: the same
batches, the contract's merge, timed by the same procedure, checked by the same oracle."""
