"""`contest`: the command line, one module per group of commands (contest/cli/main.py
registers them all; a timed job's entry, contest/cli/job.py, only its own)."""
