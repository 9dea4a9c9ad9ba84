"""A workload lane's long-lived application as a spark-submit entry point:
`spark-submit .../contest/workload/__main__.py --config F --connect HOST:PORT` (also
`python -m contest.workload ...` for a native library's lane): contest/cli/application.py."""

import sys

from contest.cli.application import serve_main

if __name__ == "__main__":
    sys.exit(serve_main(sys.argv[1:]))
