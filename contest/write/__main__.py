"""The Write job as a spark-submit entry point: `spark-submit .../contest/write/__main__.py ...`
(also `python -m contest.write ...`)."""

import sys

from contest.cli.job import job_main

if __name__ == "__main__":
    sys.exit(job_main("write", sys.argv[1:]))
