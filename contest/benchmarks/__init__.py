"""The benchmarks apart from the contest's score, in one shape (`base.Benchmark`:
options, run, record, render) and found through `registry.BENCHMARKS`."""
