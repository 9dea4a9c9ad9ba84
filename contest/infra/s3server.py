"""An embedded S3-compatible server for tests and trying the object-store path:
S3Proxy (`org.gaul:s3proxy:2.6.0`, its jar with dependencies: one self-contained
Java 17 program) with its filesystem backend, on loopback.

Why S3Proxy and not moto: measured here, S3Proxy serves 100 MB reads about 50 times
faster than moto's server, keeps objects as plain files (persistent across restarts,
inspectable) where moto holds them in memory, and enforces AWS signatures, so a
missing credential fails as it would on a real store.

Objects live in `<state_dir>/s3/data/<bucket>/<key>`; the endpoint and the generated
credentials in `<state_dir>/s3/credentials.json` (mode 0600), which the configuration
reads while the server runs (never printed).
"""

from __future__ import annotations

import os
import secrets
import shutil
from dataclasses import dataclass
from pathlib import Path

from contest.config import EMBEDDED_S3_FILE, Config
from contest.errors import ConnectorError, RunError
from contest.infra import daemons, maven
from contest.infra.storage import current_store, s3_filesystem

S3PROXY = maven.ARTIFACTS["s3proxy"].coordinate
REGION = "us-east-1"


def s3proxy_jar(home: Path | None = None) -> Path:
    """Where Maven keeps the jar (`contest s3 fetch` puts it there)."""
    return maven.jar_path(S3PROXY, maven.repository(home))


def fetch_jar() -> Path:
    """Fetch the S3Proxy jar with Maven (it is a program, not a Spark package): verified,
    a corrupt copy fetched again (contest/infra/maven.py)."""
    return maven.ensure("s3proxy")


@dataclass(frozen=True)
class EmbeddedS3:
    root: Path

    @classmethod
    def of(cls, cfg: Config) -> EmbeddedS3:
        return cls(cfg.state_path.absolute() / "s3")

    @property
    def info_file(self) -> Path:
        return self.root.parent / EMBEDDED_S3_FILE

    @property
    def data(self) -> Path:
        return self.root / "data"

    def running(self) -> dict | None:
        info = daemons.read_state(self.info_file)
        if info and daemons.alive(info["pid"]):
            return info
        return None

    def up(self, heap: str = "512m", timeout: float = 60.0) -> tuple[dict, str]:
        """Start it (or find it running); returns its info and what was done."""
        info = self.running()
        if info is not None:
            return info, "already running"
        if not shutil.which("java"):
            raise RunError("java not found: S3Proxy needs Java 17 (./build.sh installs it)")
        jar = s3proxy_jar()
        if not jar.is_file():
            raise ConnectorError(f"{S3PROXY} is not fetched: run `contest s3 fetch`")
        self.data.mkdir(parents=True, exist_ok=True)
        port = daemons.free_port()
        endpoint = f"http://127.0.0.1:{port}"
        access, secret = "contest" + secrets.token_hex(6), secrets.token_hex(20)
        props = self.root / "s3proxy.properties"
        props.write_text("")
        props.chmod(0o600)
        props.write_text(
            "\n".join(
                [
                    f"s3proxy.endpoint={endpoint}",
                    "s3proxy.authorization=aws-v2-or-v4",
                    f"s3proxy.identity={access}",
                    f"s3proxy.credential={secret}",
                    # "filesystem", not "filesystem-nio2": the latter wants backend keys
                    "jclouds.provider=filesystem",
                    f"jclouds.filesystem.basedir={self.data}",
                ]
            )
            + "\n"
        )
        log = self.root / "s3proxy.log"
        pid = daemons.spawn(
            ["java", f"-Xmx{heap}", "-jar", str(jar), "--properties", str(props)],
            log,
            {"PATH": "/usr/bin:/bin", **_java_env()},
            self.root,
        )
        info = {
            "pid": pid,
            "endpoint": endpoint,
            "region": REGION,
            "access_key": access,
            "secret_key": secret,
        }
        daemons.write_state(self.info_file, info, private=True)
        daemons.wait_until(lambda: daemons.answers(endpoint), timeout, "S3Proxy", pid, log)
        return info, "started"

    def status(self) -> str:
        info = self.running()
        if info is None:
            return "not running"
        return f"running at {info['endpoint']} (pid {info['pid']}), objects in {self.data}"

    def down(self) -> str:
        info = daemons.read_state(self.info_file)
        if info is None:
            return "not running"
        result = daemons.stop(info["pid"])
        self.info_file.unlink(missing_ok=True)
        (self.root / "s3proxy.properties").unlink(missing_ok=True)
        return result


def _java_env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k in ("JAVA_HOME", "HOME", "LANG")}


def ensure_bucket(uri: str) -> None:
    """Create the bucket of an s3:// URI when it does not exist (the embedded server
    starts empty; on a managed store the bucket is usually there)."""
    bucket = uri.split("://", 1)[1].split("/", 1)[0]
    if len(bucket) < 3:
        raise RunError(f"{uri}: bucket names have at least 3 characters")
    s3_filesystem(current_store(), create_buckets=True).create_dir(bucket, recursive=False)
