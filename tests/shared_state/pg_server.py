"""A real PostgreSQL server for the tests: initdb + pg_ctl into a temporary folder, on 127.0.0.1 with a free port,
stopped and removed afterwards. As root the server runs as the `postgres` user (initdb refuses root)."""

import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
from pathlib import Path

import pytest

ADMIN, ADMIN_PASSWORD = "oac_admin", "admin-pw-7Qx"
USER, PASSWORD = "oac_ci", "ci-pw-secret-9Zk"


def bin_dir() -> Path | None:
    for pattern in ("/usr/lib/postgresql/*/bin/initdb", "/usr/local/pgsql/bin/initdb"):
        found = sorted(glob.glob(pattern))
        if found:
            return Path(found[-1]).parent
    initdb = shutil.which("initdb")
    return Path(initdb).parent if initdb else None


def unavailable() -> str | None:
    """Why no server can be started here, or None."""
    try:
        import psycopg  # noqa: F401
    except ImportError:
        return "psycopg is not installed (pip install -e '.[test]')"
    if bin_dir() is None:
        return "PostgreSQL server binaries not found (apt-get install postgresql; .ci/run installs them)"
    if os.geteuid() == 0:
        try:
            pwd.getpwnam("postgres")
        except KeyError:
            return "running as root and there is no 'postgres' user to run the server as"
    return None


def require_postgres() -> None:
    reason = unavailable()
    if reason is not None:
        if os.environ.get("CI"):
            pytest.fail(f"CI must run the shared-state tests: {reason}")
        pytest.skip(reason)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class PgServer:
    def __init__(self) -> None:
        self.bin = bin_dir()
        self.dir = Path(tempfile.mkdtemp(prefix="oac-pg-"))
        self.data = self.dir / "data"
        self.port = free_port()
        self.as_user: list[str] = []
        if os.geteuid() == 0:
            entry = pwd.getpwnam("postgres")
            os.chown(self.dir, entry.pw_uid, entry.pw_gid)
            self.as_user = ["runuser", "-u", "postgres", "--"]
        self.running = False

    def _run(self, *args: str, timeout: float = 120, check: bool = True) -> None:
        subprocess.run([*self.as_user, *args], check=check, capture_output=True, timeout=timeout, cwd=self.dir)

    def init(self) -> "PgServer":
        pwfile = self.dir / "pw"
        pwfile.write_text(ADMIN_PASSWORD + "\n")
        if self.as_user:
            entry = pwd.getpwnam("postgres")
            os.chown(pwfile, entry.pw_uid, entry.pw_gid)
        self._run(str(self.bin / "initdb"), "-D", str(self.data), "-U", ADMIN, "--auth=scram-sha-256",
                  f"--pwfile={pwfile}", "-E", "UTF8", "--no-sync")
        pwfile.unlink()
        self.start()
        with self.admin() as conn:
            conn.execute(f"create role {USER} login password '{PASSWORD}'")
            conn.execute(f"create database oac owner {USER}")
        return self

    def start(self) -> None:
        options = (f"-c listen_addresses=127.0.0.1 -p {self.port} -c unix_socket_directories={self.dir} "
                   "-c fsync=off -c max_connections=60")  # commits survive an immediate stop (a test does that)
        self._run(str(self.bin / "pg_ctl"), "-D", str(self.data), "-o", options, "-l", str(self.dir / "log"),
                  "-w", "-t", "60", "start")
        self.running = True

    def stop(self, mode: str = "fast") -> None:
        if self.running:
            self._run(str(self.bin / "pg_ctl"), "-D", str(self.data), "-m", mode, "-w", "-t", "60", "stop")
            self.running = False

    def admin(self):
        import psycopg

        return psycopg.connect(host="127.0.0.1", port=self.port, user=ADMIN, password=ADMIN_PASSWORD,
                               dbname="postgres", autocommit=True, connect_timeout=10)

    def url(self, database: str = "oac", user: str = USER) -> str:
        return f"postgresql://{user}@127.0.0.1:{self.port}/{database}"

    def env(self, database: str = "oac", password: str = PASSWORD) -> dict[str, str]:
        return {"OAC_STATE_URL": self.url(database), "PGPASSWORD": password, "PGCONNECT_TIMEOUT": "5"}

    def fresh_database(self, name: str) -> str:
        with self.admin() as conn:
            conn.execute(f"drop database if exists {name}")
            conn.execute(f"create database {name} owner {USER}")
        return name

    def stop_command(self) -> list[str]:
        """The command that stops the server at once (a test's mock runs it mid-run)."""
        return [*self.as_user, str(self.bin / "pg_ctl"), "-D", str(self.data), "-m", "immediate", "-w", "stop"]

    def close(self) -> None:
        try:  # whatever a test left running, stopped; already stopped is fine
            self._run(str(self.bin / "pg_ctl"), "-D", str(self.data), "-m", "immediate", "-w", "stop", check=False)
        finally:
            shutil.rmtree(self.dir, ignore_errors=True)
