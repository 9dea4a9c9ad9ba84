"""The Read job as a spark-submit entry point: `spark-submit .../contest/read/__main__.py ...`
(also `python -m contest.read ...`)."""

import sys

from contest.cli.job import job_main

if __name__ == "__main__":
    sys.exit(job_main("read", sys.argv[1:]))
