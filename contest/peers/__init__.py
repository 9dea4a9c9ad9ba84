"""The table formats the harness measures, one folder each: its format, history,
streaming sinks, JVM packages, presets and defaults, and its native library's engine
(`native.py`, a Python process), registered with `contest.peers.registry.register`.
Adding a format is its folder and its line below; the lines' order is the order of the
Spark implementations in every list of formats and strategies (LakeSoul's own first, so
`optimized` leads); the native ones follow them, in the order of the ranks their folders
give them (`registry.listing_order`). contest/peers/native/ holds what the native ones
share."""

# isort: off
from contest.peers import lakesoul  # noqa: F401  (each folder registers itself)
from contest.peers import delta  # noqa: F401
from contest.peers import iceberg  # noqa: F401
from contest.peers import hudi  # noqa: F401
from contest.peers import paimon  # noqa: F401
# isort: on
