"""doit dependency backend: sqlite in WAL mode, shared safely by concurrent `oac test` runs.

Differences from doit's own sqlite backend, each for a measured failure of it:
- every row is read in one SELECT at open and decoded only when asked about; the green key, time and discovered
  imports of every task also sit in their own columns, so the warm path compares keys without decoding JSON;
- `busy_timeout` + WAL, and every write batched into short IMMEDIATE transactions, so a second process waits
  instead of dying with "database is locked";
- progress is flushed whenever a test is about to run (the reporter calls `flush`) and at the end, so after a
  SIGKILL, even one that hits a hanging test, every test that finished before it stays saved;
- a failed task leaves a tombstone (`mark_failed`, called by our reporter) so `--explain` can say "last run
  failed"; doit's own `remove` (a failure, `doit forget`) deletes the row;
- a corrupt file is moved aside with a warning and the run starts cold instead of crashing.
"""

import json
import os
import sqlite3
import sys
import time
from pathlib import Path
from typing import Any

FAILED = "_failed_"
BUSY_TIMEOUT_MS = 60_000
COLUMNS = ("green_key", "green_at", "imports", "checker", "deps")
_CHEAP = {"checker:": 0, "deps:": 1}  # what doit asks of every up-to-date task: answered without decoding its row


def _warn(message: str) -> None:
    print(f"oac: warning: {message}", file=sys.stderr)


def green_columns(values: Any) -> tuple[str | None, str | None, str | None]:
    """(key, time, imports JSON) of a task's saved values when they record a pass, else Nones."""
    if not isinstance(values, dict) or values.get("status") != "pass":
        return None, None, None
    imports = values.get("imports")
    return values.get("key"), values.get("at"), json.dumps(imports) if imports else None


class OacStateDB:
    """Implements doit's backend interface (get/set/in_/remove/remove_all/dump)."""

    desc = "oac: sqlite (WAL), bulk-loaded, crash- and concurrency-safe"

    def __init__(self, name: str, codec: Any = None, *, module_name: str | None = None) -> None:
        self.name = name
        self._raw: dict[str, str | None] = {}
        self._cache: dict[str, dict[str, Any]] = {}
        self._green: dict[str, tuple[str | None, str | None, str | None]] = {}
        self._dirty: set[str] = set()
        self._cheap: dict[str, tuple[str | None, str | None]] = {}
        Path(name).parent.mkdir(parents=True, exist_ok=True)
        try:
            self._conn = self._open(name)
            self._load()
        except sqlite3.OperationalError:
            raise  # locked, read-only, out of space: a real problem, not a corrupt file to move aside
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
        conn.execute("create table if not exists doit (task_id text not null primary key, task_data json, "
                     "green_key text, green_at text, imports text, checker text, deps text)")
        columns = {row[1] for row in conn.execute("pragma table_info(doit)")}
        for column in COLUMNS:  # a file from before these columns existed
            if column not in columns:
                try:
                    conn.execute(f"alter table doit add column {column} text")
                except sqlite3.OperationalError as exc:
                    if "duplicate column" not in str(exc):  # another run added it first
                        raise
        return conn

    def _load(self) -> None:
        raw: dict[str, str | None] = {}
        green: dict[str, tuple[str | None, str | None, str | None]] = {}
        cheap: dict[str, tuple[str | None, str | None]] = {}
        for task_id, data, key, at, imports, checker, deps in self._conn.execute(
                "select task_id, task_data, green_key, green_at, imports, checker, deps from doit"):
            raw[task_id] = data
            green[task_id] = (key, at, imports)
            if checker is not None:
                cheap[task_id] = (checker, deps)
        self._raw, self._green, self._cheap = raw, green, cheap

    def _row(self, task_id: str) -> dict[str, Any]:
        """The decoded row of one task, decoded on first use; an unreadable row counts as absent."""
        row = self._cache.get(task_id)
        if row is None:
            row = {}
            data = self._raw.pop(task_id, None)
            if data is not None:
                try:
                    value = json.loads(data)
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
        column = _CHEAP.get(dependency)
        if column is not None and task_id not in self._cache:
            found = self._cheap.get(task_id)
            if found is not None:
                value = found[column]
                return json.loads(value) if column == 1 and value is not None else value
        return self._row(task_id).get(dependency)

    def set(self, task_id: str, dependency: str, value: Any) -> None:
        row = self._row(task_id)
        if FAILED in row:
            row = self._cache[task_id] = {}
        row[dependency] = value
        self._dirty.add(task_id)

    def in_(self, task_id: str) -> bool:
        row = self._row(task_id)
        return bool(row) and FAILED not in row

    def remove(self, task_id: str) -> None:
        self._cache[task_id] = {}
        self._dirty.add(task_id)

    def remove_all(self) -> None:
        self._raw.clear()
        self._cheap.clear()
        self._cache.clear()
        self._green.clear()
        self._dirty.clear()
        self._write(lambda conn: conn.execute("delete from doit"))

    def dump(self) -> None:
        self.flush()
        self._conn.close()

    # ours ---------------------------------------------------------------------------------------------------
    def mark_failed(self, task_id: str) -> None:
        self._cache[task_id] = {FAILED: True}
        self._dirty.add(task_id)

    def failed_last(self, task_id: str) -> bool:
        return FAILED in self._row(task_id)

    def green(self, task_id: str) -> tuple[str | None, str | None]:
        """(key, time) of the task's last passing run, or (None, None): no JSON decoded."""
        key, at, _imports = self._green.get(task_id, (None, None, None))
        return key, at

    def imports(self, task_id: str) -> list[str]:
        """Project files the task's last passing run loaded (its discovered dependencies)."""
        raw = self._green.get(task_id, (None, None, None))[2]
        if not raw:
            return []
        try:
            value = json.loads(raw)
        except ValueError:
            return []
        return [str(v) for v in value] if isinstance(value, list) else []

    def flush(self) -> None:
        if not self._dirty:
            return
        rows = []
        gone = []
        for task_id in self._dirty:
            row = self._cache[task_id]
            if not row:
                gone.append((task_id,))
                self._green.pop(task_id, None)
                continue
            columns = green_columns(row.get("_values_:"))
            self._green[task_id] = columns
            deps = row.get("deps:")
            checker = row.get("checker:")
            rows.append((task_id, json.dumps(row, default=str), *columns,
                         checker if isinstance(checker, str) else None,
                         json.dumps(list(deps)) if isinstance(deps, (list, tuple)) else None))
        self._dirty = set()

        def work(conn: sqlite3.Connection) -> None:
            conn.executemany("insert or replace into doit (task_id, task_data, green_key, green_at, imports, "
                             "checker, deps) values (?, ?, ?, ?, ?, ?, ?)", rows)
            conn.executemany("delete from doit where task_id = ?", gone)
        self._write(work)

    def _write(self, work: Any) -> None:
        self._conn.execute("begin immediate")
        try:
            work(self._conn)
        except BaseException:
            self._conn.execute("rollback")
            raise
        self._conn.execute("commit")


def saved_imports(db_path: Path) -> dict[str, list[str]]:
    """task name → discovered project files of its last pass, read before doit opens the DB (keys need them)."""
    if not db_path.is_file():
        return {}
    try:
        conn = sqlite3.connect(f"file:{db_path}?mode=ro", uri=True, timeout=BUSY_TIMEOUT_MS / 1000)
        try:
            rows = conn.execute("select task_id, imports from doit where imports is not null").fetchall()
        finally:
            conn.close()
    except sqlite3.Error:
        return {}  # missing column, corrupt file: doit's open deals with it; no discovered deps known
    found: dict[str, list[str]] = {}
    for task_id, raw in rows:
        try:
            value = json.loads(raw)
        except ValueError:
            continue
        if isinstance(value, list):
            found[task_id] = [str(v) for v in value]
    return found
