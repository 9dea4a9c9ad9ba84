"""The named workloads (`contest gen --workload NAME`), shipped in the package as
`contest.workloads`."""
