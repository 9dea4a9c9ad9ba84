#!/usr/bin/env bash
# Set up everything the project needs (idempotently), then build, test or run.
#   ./build.sh          set up, then build submit.zip (the contest submission archive)
#   ./build.sh setup    set up only: system packages, virtualenv, Python packages
#   ./build.sh test     set up, then run the test suite on two pytest-xdist workers
#                       (pytest args may follow; `-n 0` for one process)
#   ./build.sh test --fast
#                       the fast tier: the Python packages set up, then only the tests
#                       that start no JVM and no server and are not slow (minutes)
#   ./build.sh run      set up, then run the main job: the contest evaluation
#                       (contest evaluate; its options may follow)
#   ./build.sh lint     set up, then the checks CI runs: ruff, ruff format --check, mypy,
#                       lint-imports (the layer contracts in pyproject.toml)
#   ./build.sh format   set up, then ruff format (and ruff's import sorting)
#   ./build.sh docs     set up, then generate the reference pages (docs/reference/, from
#                       the code) and build the documentation site into site/ (strict);
#                       --check: fail if a committed reference page is out of date instead
set -euo pipefail
cd "$(dirname "$0")"
ROOT=$(pwd)
VENV="$ROOT/.venv"
STAMP="$VENV/.installed"
PY_MIN="3.11"

log() { printf '[build] %s\n' "$*" >&2; }
die() { printf '[build] error: %s\n' "$*" >&2; exit 1; }

as_root_install() {
  # Debian packages, only when missing and only when we may install them.
  if [ "$(id -u)" -ne 0 ]; then
    die "missing system package(s) $*: install them (apt-get install $*) and run again"
  fi
  if [ ! -f "$ROOT/.state/.apt-updated" ]; then
    log "apt-get update"
    apt-get update -qq >/dev/null
    mkdir -p "$ROOT/.state" && touch "$ROOT/.state/.apt-updated"
  fi
  log "apt-get install $*"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null
}

pick_python() {
  for py in python3.12 python3.11 python3.10 python3; do
    if command -v "$py" >/dev/null 2>&1 && "$py" -c "import sys; sys.exit(sys.version_info < tuple(map(int, '$PY_MIN'.split('.'))))" 2>/dev/null; then
      command -v "$py"; return 0
    fi
  done
  return 1
}

setup_system() {
  command -v java >/dev/null 2>&1 || as_root_install openjdk-17-jre-headless
  if ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 && ! command -v initdb >/dev/null 2>&1; then
    as_root_install postgresql
  fi
  if [ "$(id -u)" -eq 0 ] && ! id postgres >/dev/null 2>&1; then
    as_root_install postgresql
  fi
}

setup_python() {
  local py
  py=$(pick_python) || die "Python >= $PY_MIN not found: install python3"
  if [ ! -x "$VENV/bin/python" ]; then
    log "creating virtualenv $VENV"
    "$py" -m venv "$VENV" || { as_root_install python3-venv; "$py" -m venv "$VENV"; }
  fi
  local want
  want=$(sha256sum pyproject.toml | cut -d' ' -f1)
  if [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$want" ]; then
    return 0
  fi
  log "installing Python packages into $VENV"
  "$VENV/bin/python" -m pip install -q --upgrade pip >/dev/null
  "$VENV/bin/python" -m pip install -q -e ".[dev]"
  echo "$want" > "$STAMP"
}

setup_jvm_libraries() {
  # Spark packages (spark.jars.packages) into Ivy's cache, and jffi's main jar, S3Proxy and
  # Hudi's bundle (which jvm/ compiles against) into the local Maven repository: only
  # what is missing or corrupt (every jar is verified; a broken one is fetched again),
  # under each cache's lock, so set-ups of several checkouts on one machine wait for
  # each other instead of reading half-written jars. A second setup fetches nothing.
  command -v mvn >/dev/null 2>&1 || as_root_install maven
  "$VENV/bin/contest" packages fetch --missing >/dev/null \
    || log "warning: contest packages fetch --missing failed (its error is above); the next ./build.sh fetches what is still missing or corrupt"
}

quiet_mvn() {
  # Maven in batch mode, its output (which carries ANSI colour codes even with -q) kept in
  # .state/mvn.log and shown, without the codes, only when it fails.
  mkdir -p "$ROOT/.state"
  if ! mvn -B -q "$@" >"$ROOT/.state/mvn.log" 2>&1; then
    sed 's/\x1b\[[0-9;]*m//g' "$ROOT/.state/mvn.log" | tail -n 40 >&2
    die "mvn $* failed (full log: .state/mvn.log)"
  fi
}

setup_jvm_stock() {
  # The project's helper jar (the lakesoul-stock strategy, and hudi-merger's record
  # merger): jvm/ built into jvm/target when its sources changed, against the jars
  # setup_jvm_libraries put in the local Maven repository.
  local want have=""
  want=$(cat jvm/pom.xml $(find jvm/src -type f | sort) | sha256sum | cut -d' ' -f1)
  [ -f jvm/target/.sources.sha256 ] && have=$(cat jvm/target/.sources.sha256)
  if [ "$want" != "$have" ] || [ ! -f jvm/target/contest-lakesoul-stock.jar ]; then
    log "building jvm/ (mvn package)"
    # Under the local Maven repository's lock (the one contest packages fetch takes), as
    # Maven may download its plugins into the repository the other set-ups share.
    local lock="$HOME/.m2/repository/.contest/lock"
    mkdir -p "$(dirname "$lock")"
    (
      flock -n 9 || { log "waiting for another set-up holding $lock"; flock 9; }
      quiet_mvn -f jvm/pom.xml package -DskipTests
    ) 9>>"$lock"
    echo "$want" > jvm/target/.sources.sha256
  fi
}

setup_cds() {
  # The class-data-sharing archive of Spark's classes the timed jobs may start their
  # JVMs from (spark.cds): made once, again only when Java or Spark's jars changed
  # (contest cds build does nothing while its stamp matches). Never fails the set-up:
  # without an archive the jobs start as before.
  "$VENV/bin/contest" cds build >/dev/null \
    || log "warning: contest cds build failed (its error is above); jobs start without the archive"
}

setup_browser() {
  # Debian's chromium, driven by playwright in the dashboard's browser test (playwright's
  # own browser downloads are not used).
  command -v chromium >/dev/null 2>&1 || as_root_install chromium
}

setup() {
  setup_system
  setup_browser
  setup_python
  setup_jvm_libraries
  setup_jvm_stock
  setup_cds
}

build_archive() {
  "$VENV/bin/python" - <<'PY'
import zipfile, pathlib
root = pathlib.Path(".")
with zipfile.ZipFile("submit.zip", "w", zipfile.ZIP_DEFLATED) as z:
    for top in ("contest", "meta", "jobs", "sql", "sweeps", "workloads"):
        for p in sorted((root / top).rglob("*")):
            if p.is_file() and "__pycache__" not in p.parts:
                z.write(p)
    for f in ("pyproject.toml", "setup.py", "README.md"):
        z.write(f)
print("[build] wrote submit.zip")
PY
}

cmd=${1:-build}
[ $# -gt 0 ] && shift
case "$cmd" in
  build) setup; build_archive ;;
  setup) setup ;;
  test)
    tier=()
    if [ "${1:-}" = "--fast" ]; then
      # The fast tier needs no Java, no jars and no PostgreSQL: the Python set-up only.
      shift; tier=(--fast); setup_python
    else
      setup
    fi
    # Two pytest-xdist workers unless the arguments choose (-n/--numprocesses, or
    # -p no:xdist): 34 minutes here against 55 in one process; three were no faster
    # (docs/development/tests.md).
    workers=(-n 2)
    for arg in "$@"; do
      case "$arg" in
        -n | -n* | --numprocesses | --numprocesses=* | no:xdist) workers=() ;;
      esac
    done
    exec "$VENV/bin/python" -m pytest "${workers[@]}" "${tier[@]}" "$@" ;;
  run)
    setup
    "$VENV/bin/contest" db up
    exec "$VENV/bin/contest" evaluate "$@" ;;
  lint)
    setup
    log "ruff check"; "$VENV/bin/ruff" check .
    log "ruff format --check"; "$VENV/bin/ruff" format --check .
    log "mypy"; "$VENV/bin/mypy"
    log "lint-imports"; "$VENV/bin/lint-imports" --no-cache ;;
  docs)
    setup
    if [ "${1:-}" = "--check" ]; then
      # CI: the committed reference pages must be what the code generates (never rewritten here)
      log "reference pages up to date?"; "$VENV/bin/python" -m contest.cli.reference --check docs/reference
    else
      log "reference pages"; "$VENV/bin/python" -m contest.cli.reference docs/reference
    fi
    log "mkdocs build --strict"; NO_MKDOCS_2_WARNING=1 "$VENV/bin/mkdocs" build --strict -q ;;
  format) setup; "$VENV/bin/ruff" check --select I --fix -q .; exec "$VENV/bin/ruff" format . ;;
  -h|--help|help) sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//' ;;
  *) die "unknown command '$cmd' (try ./build.sh help)" ;;
esac
