"""The table formats the harness measures, one folder each: its format, history,
streaming sinks, JVM packages, presets and defaults, registered with
`contest.peers.registry.register`. Adding a format is its folder and its line below;
the lines' order is the order of every list of formats and strategies (LakeSoul's own
first, so `optimized` leads)."""

# isort: off
from contest.peers import lakesoul  # noqa: F401  (each folder registers itself)
from contest.peers import delta  # noqa: F401
from contest.peers import iceberg  # noqa: F401
from contest.peers import hudi  # noqa: F401
from contest.peers import paimon  # noqa: F401
from contest.peers import native  # noqa: F401  (the formats' own Python libraries)
# isort: on
