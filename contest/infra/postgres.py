"""PostgreSQL for LakeSoul's metadata: an embedded cluster the project starts, or an
external server given by configuration.

The embedded cluster lives in `<state_dir>/pg`, listens on loopback only, and its
password is generated once and kept in files readable by the owner only.
"""

from __future__ import annotations

import glob
import os
import pwd
import secrets
import shutil
import socket
import subprocess
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from contest.config import Config
from meta.connection import PgConnection, check_reachable, parse_jdbc_url
from meta.errors import PgError
from meta.schema import apply_schema, create_database, write_lakesoul_properties

SUPERUSER = "lakesoul"
# Trades durability for speed: a crash may lose acknowledged commits or corrupt the
# cluster. Only with pg.unsafe_no_fsync=true, for throwaway benchmark runs.
UNSAFE_OPTS = "-c fsync=off -c synchronous_commit=off -c full_page_writes=off"


def find_pg_bin() -> Path:
    """The folder holding initdb, pg_ctl and postgres."""
    candidates: list[Path] = []
    on_path = shutil.which("pg_ctl")
    if on_path:
        candidates.append(Path(os.path.realpath(on_path)).parent)
    versions = sorted(
        glob.glob("/usr/lib/postgresql/*/bin"),
        key=lambda p: int(Path(p).parent.name) if Path(p).parent.name.isdigit() else 0,
        reverse=True,
    )
    candidates.extend(Path(p) for p in versions)
    for cand in candidates:
        if all((cand / tool).exists() for tool in ("initdb", "pg_ctl", "postgres")):
            return cand
    raise PgError(
        "PostgreSQL server binaries (initdb, pg_ctl, postgres) not found: "
        "install them with `apt-get install postgresql` (./build.sh does this when run as root), "
        "or point the project at an external server with LAKESOUL_PG_URL, "
        "LAKESOUL_PG_USERNAME and LAKESOUL_PG_PASSWORD"
    )


def port_free(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def pick_port(preferred: int, *fallbacks: int | None) -> int:
    """The first free port of `preferred` and `fallbacks`, else one the kernel picks."""
    for port in (preferred, *fallbacks):
        if port is not None and port_free(port):
            return port
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class EmbeddedCluster:
    """initdb/pg_ctl on a project-local folder. PostgreSQL refuses to run as root,
    so as root the server runs as the `postgres` system user."""

    def __init__(self, cfg: Config):
        self.cfg = cfg
        # Absolute: pg_ctl runs the server in its data folder, where a relative
        # socket or data path would point elsewhere.
        state = cfg.state_path.absolute()
        self.state = state
        self.root = state / "pg"
        self.data = self.root / "data"
        self.socket_dir = self.root / "run"
        self.log = self.root / "server.log"
        self.password_file = state / "pg.password"
        self.port_file = state / "pg.port"
        self.properties = state / "lakesoul.properties"

    # -- process helpers -------------------------------------------------
    def _run_as(self) -> list[str]:
        if os.geteuid() != 0:
            return []
        try:
            pwd.getpwnam("postgres")
        except KeyError:
            raise PgError(
                "running as root and no `postgres` system user exists to run the server: "
                "install the Debian package `postgresql`, which creates it"
            ) from None
        runuser = shutil.which("runuser") or shutil.which("su")
        if runuser is None:
            raise PgError("running as root: need `runuser` to start PostgreSQL as `postgres`")
        return [runuser, "-u", "postgres", "--"]

    def _pg(self, tool: str, *args: str, check: bool = True) -> subprocess.CompletedProcess:
        cmd = [*self._run_as(), str(find_pg_bin() / tool), *args]
        proc = subprocess.run(cmd, capture_output=True, text=True)
        if check and proc.returncode != 0:
            detail = proc.stderr.strip() or proc.stdout.strip()
            raise PgError(f"{tool} failed ({proc.returncode}): {detail}")
        return proc

    def _own(self, path: Path) -> None:
        if os.geteuid() == 0:
            ent = pwd.getpwnam("postgres")
            os.chown(path, ent.pw_uid, ent.pw_gid)

    # -- state -----------------------------------------------------------
    def initialized(self) -> bool:
        return (self.data / "PG_VERSION").exists()

    def running(self) -> bool:
        if not self.initialized():
            return False
        return self._pg("pg_ctl", "status", "-D", str(self.data), check=False).returncode == 0

    def port(self) -> int | None:
        try:
            return int(self.port_file.read_text().strip())
        except (OSError, ValueError):
            return None

    def pid(self) -> int | None:
        """The postmaster's process id while it runs (its first line of postmaster.pid),
        so a timed job's noise counts the server's work as the job's."""
        try:
            return int((self.data / "postmaster.pid").read_text().split()[0])
        except (OSError, ValueError, IndexError):
            return None

    def password(self) -> str:
        try:
            return self.password_file.read_text().strip()
        except OSError:
            raise PgError(
                f"embedded PostgreSQL has no password file at {self.password_file}: "
                "run `contest db up`"
            ) from None

    def connection(self) -> PgConnection:
        port = self.port()
        if port is None:
            raise PgError("embedded PostgreSQL was never started: run `contest db up`")
        return PgConnection(
            "127.0.0.1",
            port,
            self.cfg.pg.database,
            SUPERUSER,
            self.password(),
            self.cfg.pg.retry_seconds,
        )

    # -- lifecycle -------------------------------------------------------
    def init(self) -> None:
        self.cfg.state_path.mkdir(parents=True, exist_ok=True)
        self.root.mkdir(parents=True, exist_ok=True)
        self.socket_dir.mkdir(parents=True, exist_ok=True)
        for p in (self.root, self.socket_dir):
            self._own(p)
        if not self.password_file.exists():
            self.password_file.touch(mode=0o600)
            self.password_file.write_text(secrets.token_urlsafe(24))
        pwfile = self.root / "initdb.pw"
        pwfile.write_text(self.password())
        pwfile.chmod(0o600)
        self._own(pwfile)
        try:
            self._pg(
                "initdb",
                "-D",
                str(self.data),
                "-U",
                SUPERUSER,
                f"--pwfile={pwfile}",
                "--auth-host=scram-sha-256",
                "--auth-local=peer",
                "-E",
                "UTF8",
                "--locale=C",
                "--no-sync",
            )
        finally:
            pwfile.unlink(missing_ok=True)

    def up(self) -> tuple[PgConnection, str]:
        """Start (initialising on first use); returns the connection and what happened."""
        if self.running():
            conn = self.connection()
            create_database(conn)
            apply_schema(conn)
            write_lakesoul_properties(self.properties, conn)
            return conn, f"already running on 127.0.0.1:{conn.port}"
        if not self.initialized():
            self.init()
        # After a crash, the port it last ran on (when the configured one is taken):
        # clients that hold its address reconnect there instead of retrying a dead port.
        port = pick_port(self.cfg.pg.port, self.port())
        note = "" if port == self.cfg.pg.port else f" (port {self.cfg.pg.port} in use)"
        self.log.touch(exist_ok=True)
        self._own(self.log)
        opts = (
            f"-p {port} -c listen_addresses=127.0.0.1 -k {self.socket_dir} "
            "-c max_connections=200 -c shared_buffers=256MB"
        )
        if self.cfg.pg.unsafe_no_fsync:
            opts += " " + UNSAFE_OPTS
        self._pg(
            "pg_ctl",
            "start",
            "-w",
            "-t",
            "60",
            "-D",
            str(self.data),
            "-l",
            str(self.log),
            "-o",
            opts,
        )
        self.port_file.write_text(str(port))
        conn = self.connection()
        create_database(conn)
        apply_schema(conn)
        write_lakesoul_properties(self.properties, conn)
        return conn, f"started on 127.0.0.1:{port}{note}"

    def down(self) -> str:
        if not self.running():
            return "not running"
        self._pg("pg_ctl", "stop", "-w", "-m", "fast", "-D", str(self.data))
        return "stopped"

    def crash(self) -> None:
        """Stop the server as a crash would (`pg_ctl stop -m immediate`: no checkpoint,
        recovery from the WAL at the next start). For fault experiments."""
        self._pg("pg_ctl", "stop", "-w", "-m", "immediate", "-D", str(self.data))

    def status(self) -> str:
        if not self.initialized():
            return f"not initialised (state folder {self.root})"
        if not self.running():
            return f"stopped (data in {self.data})"
        return f"running on 127.0.0.1:{self.port()} (data in {self.data})"


def resolve_connection(cfg: Config) -> PgConnection:
    """External server when configured, else the embedded cluster, which must be running
    (or is started, inside a run that heals it: `database_for`)."""
    if cfg.pg.external:
        host, port, database = parse_jdbc_url(cfg.pg.url)
        return PgConnection(
            host, port, database, cfg.pg.username, cfg.pg.password, cfg.pg.retry_seconds
        )
    cluster = EmbeddedCluster(cfg)
    if not cluster.running():
        if _healing is None:
            raise PgError(
                "no PostgreSQL for LakeSoul's metadata: start the embedded one with "
                "`contest db up`, or set LAKESOUL_PG_URL, LAKESOUL_PG_USERNAME and "
                "LAKESOUL_PG_PASSWORD"
            )
        say, started = _healing
        _, what = cluster.up()
        started.append(cluster)
        say(
            f"embedded PostgreSQL {what} for this run (stopped after it; `contest db up` keeps one)"
        )
    return cluster.connection()


def local_server_pids(cfg: Config) -> tuple[int, ...]:
    """The embedded server's process id, when it runs (an external one is not ours to
    watch, and its work is not on this machine's books)."""
    if cfg.pg.external:
        return ()
    pid = EmbeddedCluster(cfg).pid()
    return (pid,) if pid is not None else ()


# The run that heals a missing embedded server (`database_for`): how it says so, and
# the clusters it started, stopped when it ends. One CLI process runs one command.
_healing: tuple[Callable[[str], None], list[EmbeddedCluster]] | None = None


@contextmanager
def database_for(cfg: Config, say: Callable[[str], None] = print) -> Iterator[None]:
    """A run that heals a missing metadata server: while it lasts, the first connection
    asked of a stopped embedded server starts it (said in one line; bad input refused
    before that starts nothing), and it is stopped when the run ends, as it was found.
    An external server is used as configured."""
    global _healing
    started: list[EmbeddedCluster] = []
    outer, _healing = _healing, (say, started)
    try:
        yield
    finally:
        _healing = outer
        for cluster in started:
            cluster.down()


def ensure_database(cfg: Config) -> PgConnection:
    """Start the embedded cluster if needed (or check the external one) and return it."""
    if cfg.pg.external:
        conn = resolve_connection(cfg)
        check_reachable(conn)
        apply_schema(conn)
        return conn
    conn, _ = EmbeddedCluster(cfg).up()
    return conn
