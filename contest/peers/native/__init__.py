"""The formats' own native libraries as peers: each format written and read by the
library its users try on one machine (no Spark, no JVM), its Write and Read jobs plain
Python processes (job.py), timed as whole processes like every other strategy and
checked by the same oracle. Each library is a `native.py` in its format's folder, which
registers it (`native_implementation`, base.py) beside its Spark implementation; what a
library cannot do is refused in one line, and what is computed outside it is in its
label. Here is what they share: the `NativeFormat` base and its registration (base.py),
the jobs (job.py), the numpy merge of a batch outside a library and the collapse of a
change batch by the delete rule (collapse.py) and the check of the pinned libraries
(libraries.py).

- delta-rs (`deltalake`, contest/peers/delta/native.py): MERGE with the contract as
  update expressions; change data by its own DELETE, UPDATE and INSERT clauses.
- pyiceberg (contest/peers/iceberg/native.py): `upsert` of rows merged outside it,
  copy-on-write; change data by its own `delete` and `upsert` in one transaction.
- lakesoul-py (`lakesoul`, contest/peers/lakesoul/native.py): upserts of rows merged
  outside it, its merge-on-read. No change data (its scan does not apply CDC deletes).
- pypaimon (contest/peers/paimon/native.py): refused (cannot be installed beside the
  harness: that module says why).
- hudi-rs (`hudi`, contest/peers/hudi/native.py): a reader only, no strategy (`contest
  bench interop` reads with it).
"""
