"""doit dependency backend: sqlite in WAL mode, shared safely by concurrent `oac test` runs.

Differences from doit's own sqlite backend, each for a measured failure of it:
- what doit asks of every task on a warm run (its green key and time, `checker:`, `deps:`, `ignore:`, the values
  of a pass) sits in columns read in one SELECT at open; a task's JSON row is read and decoded only when asked
  for more (a test that runs, `doit info`), and a pass's key parts (for `--explain`) sit in a column of their own;
- `busy_timeout` + WAL, and every write batched into short IMMEDIATE transactions, so a second process waits
  instead of dying with "database is locked";
- progress is flushed by a timer every FLUSH_SECONDS while anything is unsaved (not only when the next result
  arrives) and at the end, so after a SIGKILL, even one that hits a hanging test, what finished more than
  FLUSH_SECONDS before stays saved (lost progress only makes tests re-run, never pass);
- a failed task leaves a tombstone (`mark_failed`, called by our reporter) so `--explain` can say "last run
  failed"; doit's own `remove` (a failure, `doit forget`) deletes the row;
- a corrupt file is moved aside with a warning and the run starts cold instead of crashing;
- the test records batched in this process (`tasks.records`) are written before any row is committed, so a green
  row never exists without its record, and a record that cannot be written ends the run (exit 2) with nothing
  more committed.
"""

import contextlib
import json
import os
import sqlite3
import sys
import threading
import time
from pathlib import Path
from typing import Any, NamedTuple

from open_agent_compiler import fsio
from open_agent_compiler.errors import OacError
from open_agent_compiler.tasks.shared_session import (OUTBOX_ADDED, OUTBOX_COLUMNS, OUTBOX_DDL, SharedSession,
                                                     outbox_rows, session_for)
from open_agent_compiler.tasks.shared_store import Outcome
from open_agent_compiler.tasks.state_paths import StateError, state_error

FAILED = "_failed_"
BUSY_TIMEOUT_MS = 60_000
FLUSH_SECONDS = 0.25
VALUES = "_values_:"
RECORDS = "open_agent_compiler.tasks.records"  # imported by a test run; a compile never batches records
_owner_pid: int | None = None  # the process whose open backend writes the batched records before it commits


def batches_records() -> bool:
    """Whether a record appended in this process may wait in a batch: our backend is open here and writes the
    batch before it commits anything."""
    return _owner_pid == os.getpid()


def _write_records() -> None:
    records = sys.modules.get(RECORDS)
    if records is None:
        return
    try:
        records.write_pending()
    except OacError as exc:  # no record, no green: nothing is committed, the run ends with one line
        raise records.ResultsLogLost(str(exc)) from None
COLUMNS = ("green_key", "green_at", "imports", "checker", "deps", "ignored", "parts")


class Summary(NamedTuple):
    """The columns of one task's row."""

    green_key: str | None
    green_at: str | None
    imports: str | None  # JSON list
    checker: str | None
    deps: str | None  # JSON list
    ignored: str | None


# The summary of a row this run committed for a task doit ran (or failed, or forgot): its columns are in the file
# and read back if anything asks again, which within a run nothing does (doit checks a task once). 5,000 summaries
# with their finish times were ~0.9 MB of a cold run's peak RSS. Passes adopted from the shared state keep theirs:
# doit checks those tasks after the flush that commits them.
_ON_DISK = Summary(None, None, None, None, None, None)
_SUMMARY_SQL = "select green_key, green_at, imports, checker, deps, ignored from doit where task_id = ?"
_as_summary = tuple.__new__  # a Summary from a tuple of its six columns, in field order


def _warn(message: str) -> None:
    print(f"oac: warning: {message}", file=sys.stderr)


# `json.dumps(value, default=str)` builds this encoder on every call (keyword arguments skip json's cached one);
# made once: the flush encodes two values per executed task. An encoder keeps no state between calls.
_ENCODE = json.JSONEncoder(default=str).encode


def summarise(row: dict[str, Any]) -> tuple[Summary, str | None, str]:
    """(columns, key parts JSON, row JSON without the key parts) of a row about to be written."""
    values = row.get(VALUES)
    parts = None
    if isinstance(values, dict) and "parts" in values:
        parts = _ENCODE(values["parts"])
        row = {**row, VALUES: {k: v for k, v in values.items() if k != "parts"}}
    passed = isinstance(values, dict) and values.get("status") == "pass"
    imports = values.get("imports") if passed else None
    deps = row.get("deps:")
    checker = row.get("checker:")
    ignored = row.get("ignore:")
    summary = Summary(values.get("key") if passed else None, values.get("at") if passed else None,
                      json.dumps(imports) if imports else None, checker if isinstance(checker, str) else None,
                      json.dumps(list(deps)) if isinstance(deps, (list, tuple)) and deps else None,
                      ignored if isinstance(ignored, str) else None)
    return summary, parts, _ENCODE(row)


# sqlite's page cache, in KiB (negative: a size, not a page count; sqlite's default is 2,000 KiB). A run writes
# rows in batches and reads them in one scan at its start; the cache was ~1.8 MB of a cold run's peak RSS.
CACHE_KIB = -256


class OacStateDB:
    """Implements doit's backend interface (get/set/in_/remove/remove_all/dump)."""

    desc = "oac: sqlite (WAL), bulk-loaded, crash- and concurrency-safe"

    def __init__(self, name: str, codec: Any = None, *, module_name: str | None = None) -> None:
        self.name = name
        self._summaries: dict[str, Summary] = {}
        self._cache: dict[str, dict[str, Any]] = {}
        self._dirty: set[str] = set()
        self._lock = threading.RLock()  # the timer thread flushes while doit's thread records results
        self._stop = threading.Event()
        self._flusher: threading.Thread | None = None
        self._outbox: list[Outcome] = []  # results for the shared state (tasks.shared_session), if it is set
        self.shared = session_for(name)
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
        if self.shared is not None:
            self.attach_shared(self.shared)
        global _owner_pid
        _owner_pid = os.getpid()
        records = sys.modules.get(RECORDS)
        if records is not None:
            records.start_batches()

    def attach_shared(self, session: SharedSession) -> None:
        """Mirror results to the run's shared state, and make the passes it proved on other machines under a
        test's current key this machine's green rows. doit opens the backend before a dodo.py's `task_test`
        plans, so a plan made later attaches itself (`oac test` plans first)."""
        if self._stop.is_set():  # a backend of an earlier run in this process, already saved and closed
            return
        self.shared = session
        with self._lock:
            for task_id, row in session.adoptions.items():
                key = row[VALUES]["key"]
                summary = self._summary(task_id)
                if summary is not None and summary.green_key == key:
                    continue
                self._cache[task_id] = dict(row)
                self._summaries[task_id] = summarise(row)[0]
                self._dirty.add(task_id)
        if self._dirty and self._flusher is None:
            self._start_flusher()

    @staticmethod
    def _open(name: str) -> sqlite3.Connection:
        """Opened, in WAL mode and with its tables, one process at a time: switching a new file to WAL needs the
        file to itself, and SQLite answers "database is locked" at once (no busy wait) to a second process then
        (two pytest-xdist workers starting together)."""
        path = Path(name)
        lock = contextlib.ExitStack()
        try:
            lock.enter_context(fsio.exclusive_lock(path.parent, path.name + ".open-lock"))
        except fsio.UnsafePathError:
            raise
        except OacError as exc:  # (a read-only .oac): the database is the culprit the user knows
            raise StateError(f"cannot open the state database {name}: {str(exc).rpartition(': ')[2]}") from None
        with lock:
            return OacStateDB._open_unlocked(name)

    @staticmethod
    def _open_unlocked(name: str) -> sqlite3.Connection:
        conn = sqlite3.connect(name, isolation_level=None, timeout=BUSY_TIMEOUT_MS / 1000, check_same_thread=False)
        conn.execute(f"pragma busy_timeout={BUSY_TIMEOUT_MS}")
        conn.execute("pragma journal_mode=wal")
        conn.execute("pragma synchronous=normal")
        conn.execute(f"pragma cache_size={CACHE_KIB}")
        conn.execute(OUTBOX_DDL)
        outbox = {row[1] for row in conn.execute("pragma table_info(shared_outbox)")}
        for column in OUTBOX_ADDED:
            if column not in outbox:
                try:  # an outbox from before scopes (key parts) were shared
                    conn.execute(f"alter table shared_outbox add column {column} text")
                except sqlite3.OperationalError as exc:
                    if "duplicate column" not in str(exc):  # another run added it first
                        raise
        conn.execute("create table if not exists doit (task_id text not null primary key, task_data json, "
                     + ", ".join(f"{column} text" for column in COLUMNS) + ")")
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
        # (each row's columns taken as the Summary as they are: `Summary(*...)` ran a Python __new__ per row)
        self._summaries = {row[0]: _as_summary(Summary, row[1:]) for row in self._conn.execute(
            "select task_id, green_key, green_at, imports, checker, deps, ignored from doit")}

    def _summary(self, task_id: str) -> Summary | None:
        """The columns of the task's row (read back from the file when this run committed it)."""
        summary = self._summaries.get(task_id)
        if summary is _ON_DISK:
            with self._lock:  # (not in the middle of the flush thread's transaction)
                found = self._conn.execute(_SUMMARY_SQL, (task_id,)).fetchone()
            summary = Summary(*found) if found else None
        return summary

    def _row(self, task_id: str) -> dict[str, Any]:
        """The decoded row of one task, read on first use; an unreadable row counts as absent."""
        row = self._cache.get(task_id)
        if row is None:
            row = {}
            if task_id in self._summaries:
                found = self._conn.execute("select task_data from doit where task_id = ?", (task_id,)).fetchone()
                try:
                    value = json.loads(found[0]) if found and found[0] is not None else {}
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
        if task_id not in self._cache:
            summary = self._summary(task_id)
            if summary is not None and summary.checker is not None:  # a row written by this backend
                if dependency == "checker:":
                    return summary.checker
                if dependency == "deps:":
                    return json.loads(summary.deps) if summary.deps and summary.deps != "[]" else None
                if dependency == "ignore:":
                    return summary.ignored
                if dependency == VALUES and summary.green_key is not None:
                    return self._green_values(summary)
        return self._row(task_id).get(dependency)

    @staticmethod
    def _green_values(summary: Summary) -> dict[str, Any]:
        values: dict[str, Any] = {"key": summary.green_key, "status": "pass", "at": summary.green_at}
        if summary.imports:
            values["imports"] = json.loads(summary.imports)
        return values

    def set(self, task_id: str, dependency: str, value: Any) -> None:
        with self._lock:
            row = self._row(task_id)
            if FAILED in row:
                row = self._cache[task_id] = {}
            row[dependency] = value
            self._dirty.add(task_id)
            if (self.shared is not None and dependency == VALUES and isinstance(value, dict)
                    and value.get("status") == "pass" and "key" in value and not value.get("shared")):
                imports = value.get("imports")
                self._outbox.append(Outcome(task_id, value["key"], "pass", value.get("at") or "",
                                            tuple(imports) if imports else None, value.get("duration_s"),
                                            value.get("scope"), value.get("parts")))
        if self._flusher is None:
            self._start_flusher()

    def in_(self, task_id: str) -> bool:
        row = self._row(task_id)
        return bool(row) and FAILED not in row

    def remove(self, task_id: str) -> None:
        with self._lock:
            self._cache[task_id] = {}
            self._dirty.add(task_id)

    def remove_all(self) -> None:
        with self._lock:
            self._summaries.clear()
            self._cache.clear()
            self._dirty.clear()
            self._write(lambda conn: conn.execute("delete from doit"))

    def dump(self) -> None:
        self._stop.set()
        flusher = self._flusher
        # (a Ctrl-C between making the thread and starting it leaves one never started: nothing to join)
        if flusher is not None and flusher is not threading.current_thread() and flusher.ident is not None:
            flusher.join()
        global _owner_pid
        try:
            self.flush()
            if _owner_pid == os.getpid():
                _write_records()  # (nothing was dirty: the records still go out before the run ends)
        finally:
            if _owner_pid == os.getpid():
                _owner_pid = None
            self._conn.close()
            if self.shared is not None:
                self.shared.close()

    # ours ---------------------------------------------------------------------------------------------------
    def mark_failed(self, task_id: str, key: str | None = None, at: str = "",
                    duration_s: float | None = None, parts: dict[str, Any] | None = None) -> None:
        """A failed run: --explain says so, and under shared state the failure cancels the key's pass everywhere."""
        with self._lock:
            self._cache[task_id] = {FAILED: True}
            self._dirty.add(task_id)
            if self.shared is not None and key is not None:
                self._outbox.append(Outcome(task_id, key, "fail", at, None, duration_s, parts=parts))

    def failed_last(self, task_id: str) -> bool:
        return FAILED in self._row(task_id)

    def green(self, task_id: str) -> tuple[str | None, str | None]:
        """(key, time) of the task's last passing run, or (None, None): no JSON decoded."""
        summary = self._summary(task_id)
        return (summary.green_key, summary.green_at) if summary is not None else (None, None)

    def parts(self, task_id: str) -> dict[str, Any]:
        """The key parts saved with the task's last successful run (for `--explain`)."""
        row = self._cache.get(task_id)
        values = row.get(VALUES) if row else None
        if isinstance(values, dict) and "parts" in values:
            return values["parts"]
        found = self._conn.execute("select parts from doit where task_id = ?", (task_id,)).fetchone()
        try:
            parts = json.loads(found[0]) if found and found[0] else {}
        except ValueError:
            return {}
        return parts if isinstance(parts, dict) else {}

    def _start_flusher(self) -> None:
        self._flusher = threading.Thread(target=self._flush_periodically, name="oac-state-flush", daemon=True)
        self._flusher.start()

    def _flush_periodically(self) -> None:
        fsio.own_thread()  # what it opens while a test runs is not the test's read
        while not self._stop.wait(FLUSH_SECONDS):
            try:
                self.flush()
            except SystemExit:  # a lost record batch: the next record (or the final flush) ends the run
                return

    def flush(self) -> None:
        self._flush_local()
        if self.shared is not None:  # after the local commit: the outbox rows are durable before they are pushed
            self.shared.push_outbox()

    def _flush_local(self) -> None:
        with self._lock:
            if not self._dirty and not self._outbox:
                return
            rows = []
            gone = []
            for task_id in self._dirty:
                row = self._cache[task_id]
                if not row:
                    gone.append((task_id,))
                    self._summaries.pop(task_id, None)
                    continue
                summary, parts, data = summarise(row)
                values = row.get(VALUES)
                shared = isinstance(values, dict) and values.get("shared")
                self._summaries[task_id] = summary if shared else _ON_DISK  # (committed below)
                rows.append((task_id, data, *summary, parts))
            self._dirty = set()
            outbox, self._outbox = outbox_rows(self._outbox), []
            _write_records()  # every row above was set after its record was batched: the records go first

            def work(conn: sqlite3.Connection) -> None:
                conn.executemany("insert or replace into doit (task_id, task_data, " + ", ".join(COLUMNS)
                                 + ") values (?, ?, " + ", ".join("?" for _ in COLUMNS) + ")", rows)
                conn.executemany("delete from doit where task_id = ?", gone)
                conn.executemany(f"insert into shared_outbox ({OUTBOX_COLUMNS}) values (?, ?, ?, ?, ?, ?, ?, ?)",
                                 outbox)
            self._write(work)
            # Committed: a done task's row is read back from the file if anything asks again (cold peak RSS:
            # 5,000 rows with their key parts were held until the end of the run).
            for task_id, *_ in (*rows, *gone):
                self._cache.pop(task_id, None)

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


def saved_parts(db_path: Path, task_id: str) -> dict[str, Any]:
    """The key parts saved with a task's last pass (read-only; {} when there are none), for `oac show`."""
    if not db_path.is_file():
        return {}
    try:
        conn = sqlite3.connect(f"file:{db_path}?mode=ro", uri=True, timeout=BUSY_TIMEOUT_MS / 1000)
        try:
            row = conn.execute("select parts from doit where task_id = ?", (task_id,)).fetchone()
        finally:
            conn.close()
        parts = json.loads(row[0]) if row and row[0] else {}
    except (sqlite3.Error, ValueError):
        return {}
    return parts if isinstance(parts, dict) else {}
