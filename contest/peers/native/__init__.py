"""The formats' own native libraries as peers: each format written and read by the
library its users try on one machine (no Spark, no JVM), its Write and Read jobs plain
Python processes (contest/peers/native/job.py), timed as whole processes like every
other strategy and checked by the same oracle. One module per library; what a library
cannot do is refused in one line, and what is computed outside it is in its label.

- delta-rs (`deltalake`): MERGE with the contract as update expressions.
- pyiceberg: `upsert` of rows merged outside it, copy-on-write.
- lakesoul-py (`lakesoul`): upserts of rows merged outside it, its merge-on-read.
- pypaimon: refused (cannot be installed beside the harness: paimon_py.py says why).
- hudi-rs (`hudi`): a reader only, no strategy (`contest bench interop` reads with it).
"""

from __future__ import annotations

from contest.peers.native import delta_rs, hudi_rs, iceberg_py, lakesoul_py, paimon_py
from contest.peers.registry import NATIVE, Implementation, Strategy, register

register(
    Implementation(
        name=delta_rs.FORMAT.name,
        table_format=f"Delta Lake (delta-rs {delta_rs.VERSION})",
        engine=delta_rs.FORMAT.label,
        peer=delta_rs.FORMAT,
        # lz4_raw, as delta-merge: the cheapest codec that still compresses. Defaults:
        # delta-rs's own writer properties (snappy).
        strategies=(
            Strategy(
                "delta-rs",
                {"peer.format": delta_rs.FORMAT.name, "peer.codec": "lz4_raw"},
                defaults={"peer.format": delta_rs.FORMAT.name},
            ),
        ),
        merge_engine=delta_rs.MERGE_ENGINE,
        kind=NATIVE,
        libraries=(f"deltalake=={delta_rs.VERSION}",),
    )
)
register(
    Implementation(
        name=iceberg_py.FORMAT.name,
        table_format=f"Apache Iceberg (pyiceberg {iceberg_py.VERSION})",
        engine=iceberg_py.FORMAT.label,
        peer=iceberg_py.FORMAT,
        # snappy, as iceberg-mor; defaults: PyIceberg's zstd.
        strategies=(
            Strategy(
                "pyiceberg",
                {"peer.format": iceberg_py.FORMAT.name, "peer.codec": "snappy"},
                defaults={"peer.format": iceberg_py.FORMAT.name},
            ),
        ),
        kind=NATIVE,
        libraries=(f"pyiceberg=={iceberg_py.VERSION}",),
    )
)
register(
    Implementation(
        name=lakesoul_py.FORMAT.name,
        table_format=f"LakeSoul (its Python engine, lakesoul {lakesoul_py.VERSION})",
        engine=lakesoul_py.FORMAT.label,
        peer=lakesoul_py.FORMAT,
        # parquet (every reader here reads it) in the contest's 4 hash buckets; defaults:
        # its writer's vortex-compact files and its own bucket count.
        strategies=(
            Strategy(
                "lakesoul-py",
                {
                    "peer.format": lakesoul_py.FORMAT.name,
                    "peer.file_format": "parquet",
                    "peer.buckets": 4,
                },
                defaults={"peer.format": lakesoul_py.FORMAT.name},
            ),
        ),
        kind=NATIVE,
        libraries=(f"lakesoul=={lakesoul_py.VERSION}",),
    )
)
register(
    Implementation(
        name=paimon_py.FORMAT.name,
        table_format=f"Apache Paimon (pypaimon {paimon_py.VERSION})",
        engine=paimon_py.FORMAT.label,
        peer=paimon_py.FORMAT,
        strategies=(
            Strategy(
                "pypaimon",
                {"peer.format": paimon_py.FORMAT.name},
                defaults={"peer.format": paimon_py.FORMAT.name},
            ),
        ),
        kind=NATIVE,
        unavailable=paimon_py.WHY,
    )
)
register(
    Implementation(
        name=hudi_rs.FORMAT.name,
        table_format=f"Apache Hudi (hudi-rs {hudi_rs.VERSION})",
        engine=hudi_rs.FORMAT.label,
        peer=hudi_rs.FORMAT,
        kind=NATIVE,
        libraries=(f"hudi=={hudi_rs.VERSION}",),
    )
)
