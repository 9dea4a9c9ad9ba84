"""spark-submit entry point of the Read job: `spark-submit jobs/Read.py --table T --out D`.

Thin on purpose: the job is `contest read`; see `contest read --help`.
"""

import sys

from contest.cli.main import job_main

if __name__ == "__main__":
    sys.exit(job_main("read", sys.argv[1:]))
