"""doit dependency backend: sqlite in WAL mode, shared safely by concurrent `oac test` runs.

Differences from doit's own sqlite backend, each for a measured failure of it:
- the green key and time of every task sit in their own columns, read in one SELECT at open (the warm path
  asks for every test's green state); the JSON rows are decoded only for tasks that are asked about;
- `busy_timeout` + WAL, and every write batched into short IMMEDIATE transactions, so a second process waits
  instead of dying with "database is locked";
- rows are flushed every FLUSH_SECONDS during the run, not only at the end, so a SIGKILL loses at most that
  much progress (lost progress only makes tests re-run, never pass);
- a failed task leaves a tombstone instead of a deleted row, so `--explain` can say "last run failed";
- a corrupt file is moved aside with a warning and the run starts cold instead of crashing.
"""

import json
import os
import sqlite3
import sys
import time
from pathlib import Path
from typing import Any

from open_agent_compiler.tasks.state_paths import state_error

FAILED = "_failed_"
FLUSH_SECONDS = 0.25
BUSY_TIMEOUT_MS = 60_000


def _warn(message: str) -> None:
    print(f"oac: warning: {message}", file=sys.stderr)


class OacStateDB:
    """Implements doit's backend interface (get/set/in_/remove/remove_all/dump)."""

    desc = "oac: sqlite (WAL), bulk-loaded, crash- and concurrency-safe"

    def __init__(self, name: str, codec: Any = None, *, module_name: str | None = None) -> None:
        self.name = name
        self._cache: dict[str, dict[str, Any]] = {}
        self._green: dict[str, tuple[str | None, str | None]] = {}
        self._dirty: set[str] = set()
        self._last_flush = time.monotonic()
        try:
            Path(name).parent.mkdir(parents=True, exist_ok=True)
            self._conn = self._open(name)
            self._load()
        except (sqlite3.OperationalError, OSError) as exc:  # locked, read-only, out of space: not corrupt
            raise state_error(name, exc, "open the state database") from None
        except sqlite3.DatabaseError as exc:
            self._move_aside(name, exc)
            self._conn = self._open(name)
            self._load()

    @staticmethod
    def _open(name: str) -> sqlite3.Connection:
        conn = sqlite3.connect(name, isolation_level=None, timeout=BUSY_TIMEOUT_MS / 1000)
        conn.execute(f"pragma busy_timeout={BUSY_TIMEOUT_MS}")
        conn.execute("pragma journal_mode=wal")
        conn.execute("pragma synchronous=normal")
        conn.execute("create table if not exists doit "
                     "(task_id text not null primary key, task_data json, green_key text, green_at text)")
        columns = {row[1] for row in conn.execute("pragma table_info(doit)")}
        for column in ("green_key", "green_at"):  # a file from before these columns existed
            if column not in columns:
                try:
                    conn.execute(f"alter table doit add column {column} text")
                except sqlite3.OperationalError as exc:
                    if "duplicate column" not in str(exc):  # another run added it first
                        raise
        return conn

    def _load(self) -> None:
        self._green = {
            task_id: (key, at) for task_id, key, at in self._conn.execute("select task_id, green_key, green_at from doit")
        }

    def _row(self, task_id: str) -> dict[str, Any]:
        """The decoded row of one task, read on first use; an unreadable row counts as absent."""
        row = self._cache.get(task_id)
        if row is None:
            row = {}
            if task_id in self._green:
                found = self._conn.execute("select task_data from doit where task_id = ?", (task_id,)).fetchone()
                try:
                    value = json.loads(found[0]) if found else {}
                except (TypeError, ValueError):
                    _warn(f"{self.name}: ignored the unreadable row of {task_id}; it will run again")
                    value = {}
                row = value if isinstance(value, dict) else {}
            self._cache[task_id] = row
        return row

    def _move_aside(self, name: str, exc: Exception) -> None:
        aside = f"{name}.corrupt-{int(time.time())}"
        for suffix in ("", "-wal", "-shm"):
            if os.path.exists(name + suffix):
                os.replace(name + suffix, aside + suffix)
        _warn(f"state database {name} is unreadable ({exc}); moved it to {aside} and starting cold")

    # doit's backend interface ---------------------------------------------------------------------------------
    def get(self, task_id: str, dependency: str) -> Any:
        return self._row(task_id).get(dependency)

    def set(self, task_id: str, dependency: str, value: Any) -> None:
        row = self._row(task_id)
        if FAILED in row:
            row = self._cache[task_id] = {}
        row[dependency] = value
        self._dirty.add(task_id)
        if time.monotonic() - self._last_flush > FLUSH_SECONDS:
            self.flush()

    def in_(self, task_id: str) -> bool:
        row = self._row(task_id)
        return bool(row) and FAILED not in row

    def remove(self, task_id: str) -> None:
        self._cache[task_id] = {FAILED: True}
        self._dirty.add(task_id)

    def remove_all(self) -> None:
        self._cache.clear()
        self._green.clear()
        self._dirty.clear()
        self._write(lambda conn: conn.execute("delete from doit"))

    def dump(self) -> None:
        self.flush()
        self._conn.close()

    # ours ---------------------------------------------------------------------------------------------------
    def failed_last(self, task_id: str) -> bool:
        return FAILED in self._row(task_id)

    def green(self, task_id: str) -> tuple[str | None, str | None]:
        """(key, time) of the task's last passing run, or (None, None): no JSON decoded."""
        return self._green.get(task_id, (None, None))

    def flush(self) -> None:
        self._last_flush = time.monotonic()
        if not self._dirty:
            return
        rows = []
        for task_id in self._dirty:
            row = self._cache[task_id]
            values = row.get("_values_:") or {}
            passed = isinstance(values, dict) and values.get("status") == "pass"
            key, at = (values.get("key"), values.get("at")) if passed else (None, None)
            self._green[task_id] = (key, at)
            rows.append((task_id, json.dumps(row, default=str), key, at))
        self._dirty = set()
        self._write(lambda conn: conn.executemany(
            "insert or replace into doit (task_id, task_data, green_key, green_at) values (?, ?, ?, ?)", rows))

    def _write(self, work: Any) -> None:
        try:
            self._conn.execute("begin immediate")
            try:
                work(self._conn)
            except BaseException:
                self._conn.execute("rollback")
                raise
            self._conn.execute("commit")
        except (sqlite3.OperationalError, OSError) as exc:  # e.g. a full disk: one line naming the file
            raise state_error(self.name, exc, "write the state database") from None
