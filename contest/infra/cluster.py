"""A Spark standalone cluster on this machine, from the Spark that pyspark ships:
`spark-class ...deploy.master.Master` and N `...deploy.worker.Worker`, on loopback.

State (pids, ports), logs and the workers' work and scratch folders live in
`<state_dir>/cluster`. The cluster is what `spark-submit --master spark://...` runs
on; a worker that died is started again by the next `up`.
"""

from __future__ import annotations

import os
import socket
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from contest.config import Config
from contest.errors import RunError, UsageError
from contest.infra import daemons

MASTER_CLASS = "org.apache.spark.deploy.master.Master"
WORKER_CLASS = "org.apache.spark.deploy.worker.Worker"
HOST = "127.0.0.1"
# Each application copies its --packages jars into every worker's work folder (hadoop-aws
# and the AWS SDK: 270 MB): the workers delete finished applications' folders.
WORKER_OPTS = (
    "-Dspark.worker.cleanup.enabled=true -Dspark.worker.cleanup.interval=300 "
    "-Dspark.worker.cleanup.appDataTtl=600"
)


def spark_home() -> Path:
    import pyspark  # deferred: pyspark is slow to import (JVM-backed); only where Spark runs

    return Path(pyspark.__file__).resolve().parent


def daemon_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYSPARK_GATEWAY")}
    env.update(
        SPARK_HOME=str(spark_home()),
        SPARK_LOCAL_IP=HOST,  # bind and advertise loopback, not the machine's address
        SPARK_LOCAL_HOSTNAME=HOST,
        SPARK_NO_DAEMONIZE="1",  # spark-class in the foreground: our pid is the daemon's
        SPARK_DAEMON_MEMORY="256m",  # the daemons themselves need little heap
        PYSPARK_PYTHON=sys.executable,
    )
    env.update(extra or {})
    return env


@dataclass(frozen=True)
class Standalone:
    """The cluster of one state folder."""

    root: Path

    @classmethod
    def of(cls, cfg: Config) -> Standalone:
        return cls(cfg.state_path.absolute() / "cluster")

    @property
    def state_file(self) -> Path:
        return self.root / "state.json"

    def state(self) -> dict | None:
        st = daemons.read_state(self.state_file)
        return st if st and daemons.alive(st["master"]["pid"]) else None

    def master_json(self, st: dict) -> dict:
        return daemons.get_json(f"http://{HOST}:{st['master']['webui_port']}/json/")

    def alive_workers(self, st: dict) -> int:
        try:
            workers = self.master_json(st).get("workers", [])
        except OSError:
            return 0
        return sum(1 for w in workers if w.get("state") == "ALIVE")

    def up(self, workers: int, cores: int, memory: str, timeout: float = 120.0) -> dict:
        """Start the master and the workers, or (running) start the workers that died;
        returns when every worker is registered."""
        st = self.state()
        if st is not None:
            asked = (workers, cores, memory)
            have = (len(st["workers"]), st["workers"][0]["cores"], st["workers"][0]["memory"])
            if asked != have:
                raise UsageError(
                    f"a cluster runs already ({st['master_url']}, {have[0]} workers x "
                    f"{have[1]} cores, {have[2]}): `contest cluster down` first"
                )
        else:
            st = self._start_master()
            st["workers"] = [{"cores": cores, "memory": memory, "pid": 0} for _ in range(workers)]
        for i, w in enumerate(st["workers"]):
            if not daemons.alive(w["pid"]):
                w.update(self._start_worker(st["master_url"], i, w["cores"], w["memory"]))
        daemons.write_state(self.state_file, st)
        log = self.root / "logs"
        daemons.wait_until(
            lambda: self.alive_workers(st) >= len(st["workers"]),
            timeout,
            f"{len(st['workers'])} Spark workers registering",
            st["master"]["pid"],
            log,
        )
        return st

    def _start_master(self) -> dict:
        port, web = daemons.free_port(), daemons.free_port()
        log = self.root / "logs" / "master.log"
        pid = daemons.spawn(
            [
                str(spark_home() / "bin" / "spark-class"),
                MASTER_CLASS,
                "--host",
                HOST,
                "--port",
                str(port),
                "--webui-port",
                str(web),
            ],
            log,
            daemon_env(),
            self.root,
        )
        st = {
            "master_url": f"spark://{HOST}:{port}",
            "web_ui": f"http://{HOST}:{web}",
            "master": {"pid": pid, "port": port, "webui_port": web},
            "started": time.time(),
        }
        daemons.write_state(self.state_file, {**st, "workers": []})
        daemons.wait_until(
            lambda: daemons.answers(f"http://{HOST}:{web}/json/"), 60, "Spark master", pid, log
        )
        return st

    def _start_worker(self, master_url: str, i: int, cores: int, memory: str) -> dict:
        port, web = daemons.free_port(), daemons.free_port()
        work, local = self.root / "work" / f"worker-{i}", self.root / "local" / f"worker-{i}"
        work.mkdir(parents=True, exist_ok=True)
        local.mkdir(parents=True, exist_ok=True)
        pid = daemons.spawn(
            [
                str(spark_home() / "bin" / "spark-class"),
                WORKER_CLASS,
                master_url,
                "--host",
                HOST,
                "--port",
                str(port),
                "--webui-port",
                str(web),
                "--cores",
                str(cores),
                "--memory",
                memory,
                "--work-dir",
                str(work),
            ],
            self.root / "logs" / f"worker-{i}.log",
            daemon_env(
                {
                    "SPARK_LOCAL_DIRS": str(local),
                    "SPARK_WORKER_DIR": str(work),
                    "SPARK_WORKER_OPTS": WORKER_OPTS,
                }
            ),
            self.root,
        )
        return {"pid": pid, "port": port, "webui_port": web, "work_dir": str(work)}

    def status(self) -> dict:
        st = self.state()
        if st is None:
            return {"running": False}
        out = {
            "running": True,
            "master_url": st["master_url"],
            "web_ui": st["web_ui"],
            "workers": [
                {"pid": w["pid"], "alive": daemons.alive(w["pid"]), "cores": w["cores"]}
                for w in st["workers"]
            ],
        }
        try:
            j = self.master_json(st)
        except OSError as exc:
            out["error"] = str(exc)
            return out
        out.update({k: j.get(k) for k in ("aliveworkers", "cores", "coresused", "memory")})
        out["apps"] = [a.get("name") for a in j.get("activeapps", [])]
        return out

    def down(self) -> dict:
        st = daemons.read_state(self.state_file)
        if st is None:
            return {}
        res = {}
        # workers first (they stop their executors), then the master
        for i, w in enumerate(st["workers"]):
            res[f"worker-{i}"] = daemons.stop(w["pid"]) if w["pid"] else "not started"
        res["master"] = daemons.stop(st["master"]["pid"])
        self.state_file.unlink(missing_ok=True)
        return res


def check_master(master: str) -> None:
    """A spark:// master must answer before a timed job is submitted to it (one line,
    not a Java trace after the application's registration timeout)."""
    if not master.startswith("spark://"):
        return
    host, _, port = master.removeprefix("spark://").partition(":")
    try:
        with socket.create_connection((host, int(port or 7077)), timeout=3):
            return
    except (OSError, ValueError):
        raise RunError(
            f"no Spark master answers at {master} (start one with `contest cluster up`)"
        ) from None
