"""spark-submit entry point of the Write job: `spark-submit jobs/Write.py --data D --table T`.

Thin on purpose: the job is `contest write`; see `contest write --help`.
"""

import sys

from contest.cli.main import job_main

if __name__ == "__main__":
    sys.exit(job_main("write", sys.argv[1:]))
