"""`contest bench faults`: fault-injection experiments on small generated data.

Each experiment breaks something on purpose (kill -9 of a command's whole process
group, a PostgreSQL crash, writers racing, a full disk, two evaluations in one work
folder or at once in two, nested table folders, a user's folders beside a result) and
then checks the promises of README "Failures and recovery": no acknowledged commit
lost, no user file destroyed, no half-commit, every failure one line, and every case
recoverable by a documented command. The killed commands are real separate processes
(`python -m contest.cli.main ...`); recovery runs in this process through the functions
those commands call, on one shared Spark session.

Modules: `checks` (pure checks of logs, failure lines and snapshots), `context` (what
the experiments share, and the recovery steps), one module per kind of experiment
(`kills`, `pg_crash`, `writers`, `disk_full`, `overlap`, `nested`, `user_folders`,
`apart`), `plan` (which run, how often), `report` (an experiment's outcome and the
table), `bench` (the benchmark).
Results: `faults.md` (a table, one row per experiment) and `faults.jsonl` (one record
per experiment, with its trials) in the results folder.
"""
