"""`contest bench duckdb`: the optimized pipeline against DuckDB's reference merge.

`bench` (the benchmark), `reference` (how DuckDB's reference runs: its variants, a
child process), `merge` (the reference merge itself, `python -m
contest.benchmarks.duckdb.merge`), `floor` (the least any merge can cost here), `page`
(duckdb.md)."""
