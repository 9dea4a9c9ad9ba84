"""The embedded cluster, for real: initdb, pg_ctl, a port, the schema."""

import socket

import psutil
import psycopg2
import pytest

from contest.infra.postgres import EmbeddedCluster, local_server_pids, resolve_connection
from meta.connection import parse_jdbc_url
from meta.errors import PgError
from tests.support.config import REPO, make_config


def test_up_twice_reports_the_running_cluster(cfg, pg):
    if cfg.pg.external:
        pytest.skip("external PostgreSQL configured")
    conn, what = EmbeddedCluster(cfg).up()
    assert what.startswith("already running")
    assert conn.port == pg.port
    assert "running on 127.0.0.1" in EmbeddedCluster(cfg).status()


def test_schema_has_lakesoul_and_project_tables(pg):
    with psycopg2.connect(**pg.dsn()) as c, c.cursor() as cur:
        cur.execute("SELECT tablename FROM pg_tables WHERE schemaname = 'public'")
        tables = {r[0] for r in cur.fetchall()}
    assert {
        "table_info",
        "partition_info",
        "data_commit_info",
        "namespace",
        "contest_commit_version",
    } <= tables


def test_properties_file_is_private_and_names_the_cluster(cfg, pg):
    if cfg.pg.external:
        pytest.skip("external PostgreSQL configured")
    props = EmbeddedCluster(cfg).properties
    assert oct(props.stat().st_mode & 0o777) == "0o600"
    text = props.read_text()
    assert f"lakesoul.pg.url=jdbc:postgresql://127.0.0.1:{pg.port}/" in text


def test_port_in_use_moves_to_another(tmp_path, pg):
    # A second cluster in its own folder, asked for a port that is taken.
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        taken = busy.getsockname()[1]
        other = make_config(
            tmp_path, state_dir=str(pg_state(tmp_path)), **{"pg.port": taken, "pg.url": ""}
        )  # always embedded here
        cluster = EmbeddedCluster(other)
        try:
            conn, what = cluster.up()
            assert conn.port != taken
            assert f"port {taken} in use" in what
            # Crashed and started again while the configured port is still taken: back on
            # the port it ran on, where its clients retry (not on a new one they never find).
            cluster.crash()
            again, _ = cluster.up()
            assert again.port == conn.port
        finally:
            cluster.down()


def pg_state(tmp_path):
    # postgres (the server's user when we are root) must reach the folder.
    path = REPO / ".state" / f"tests-{tmp_path.name}"
    path.mkdir(parents=True, exist_ok=True)
    return path


def test_not_running_says_what_to_run(tmp_path):
    cfg = make_config(tmp_path, state_dir=str(tmp_path / "none"), **{"pg.url": ""})
    with pytest.raises(PgError, match="contest db up"):
        resolve_connection(cfg)


def test_jdbc_urls():
    assert parse_jdbc_url("jdbc:postgresql://db.example:6543/meta?x=1") == (
        "db.example",
        6543,
        "meta",
    )
    with pytest.raises(PgError, match="database"):
        parse_jdbc_url("jdbc:postgresql://h:1/")
    with pytest.raises(PgError):
        parse_jdbc_url("mysql://h/db")


@pytest.mark.pg  # starts its own embedded cluster
def test_a_relative_state_folder_starts(tmp_path, monkeypatch):
    # The default state_dir is `.state`, relative; the server runs in its data folder,
    # so the socket folder must be made absolute (it once failed: "could not create lock
    # file .state/pg/run/.s.PGSQL...").
    state = pg_state(tmp_path)
    monkeypatch.chdir(state.parent)
    rel = make_config(tmp_path, state_dir=state.name, **{"pg.url": "", "pg.port": 54392})
    cluster = EmbeddedCluster(rel)
    try:
        conn, _ = cluster.up()
        with psycopg2.connect(**conn.dsn()) as c, c.cursor() as cur:
            cur.execute("SELECT 1")
            assert cur.fetchone() == (1,)
        cluster.crash()  # fault experiments' immediate stop, then a restart recovers
        assert not cluster.running()
        assert cluster.up()[1].startswith("started")
    finally:
        cluster.down()


def test_the_running_servers_pid_is_its_postmaster(cfg, pg):
    # A timed job's noise counts this server's work as the job's (contest/infra/noise.py).
    pids = local_server_pids(cfg)
    if cfg.pg.external:
        assert pids == ()
        return
    (pid,) = pids
    assert psutil.Process(pid).name().startswith("postgres")
    # Its backends are its children: a job's connection is served inside this tree.
    assert any(c.name().startswith("postgres") for c in psutil.Process(pid).children())


def test_a_run_heals_a_missing_embedded_server_and_leaves_it_as_found(tmp_path, pg):
    """`database_for` (commands that run jobs: evaluate, compare, sweep, bench, workload
    run): a stopped embedded server is started when the run first asks for it, said in
    one line, and stopped after the run; a running one is left running."""
    from contest.infra.postgres import database_for

    with socket.socket() as free:
        free.bind(("127.0.0.1", 0))
        port = free.getsockname()[1]
    cfg = make_config(
        tmp_path, state_dir=str(pg_state(tmp_path)), **{"pg.port": port, "pg.url": ""}
    )  # always embedded here, a folder and a port of its own
    cluster, said = EmbeddedCluster(cfg), []
    assert not cluster.running()
    with database_for(cfg, said.append):
        assert not cluster.running() and not said  # bad input refused here starts nothing
        resolve_connection(cfg)  # what a run asks for first
        assert cluster.running()
        resolve_connection(cfg)
    assert not cluster.running()
    assert len(said) == 1 and "started on 127.0.0.1" in said[0] and "stopped after" in said[0]
    cluster.up()
    try:
        with database_for(cfg, said.append):
            resolve_connection(cfg)
        assert cluster.running() and len(said) == 1  # found running: left running, silent
    finally:
        cluster.down()
