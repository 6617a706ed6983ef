"""One run's view of the shared green state (see `shared_store`), and the local outbox that feeds it.

At planning, in one connection: push what earlier runs left in the outbox (offline, killed), then read the
outcomes of every planned test in one round trip. A test is green iff the last run under its current key passed:
the shared outcome decides where there is one (a failure anywhere cancels a pass everywhere), the local state
where there is none. A shared pass this machine has not seen is adopted into the local doit state, so doit's own
up-to-date check skips it. Results go to the outbox, a table in the local state database written in the same
transaction as doit's rows (after the JSONL record: record before green), and are pushed in batches by the
backend's flush; an unreachable server leaves them there for the next run.
"""

import json
import os
import sqlite3
import sys
import threading
from pathlib import Path
from typing import Any

from open_agent_compiler import fsio
from open_agent_compiler.errors import OacError
from open_agent_compiler.tasks.shared_store import Known, Outcome, SharedStateError, SharedStore, only

OUTBOX_DDL = ("create table if not exists shared_outbox (seq integer primary key autoincrement, task_id text not null,"
              " key text not null, status text not null, finished_at text, imports text, duration_s real, scope text,"
              " parts text)")
OUTBOX_COLUMNS = "task_id, key, status, finished_at, imports, duration_s, scope, parts"
OUTBOX_ADDED = ("scope", "parts")  # columns an outbox made by an older oac lacks (added at open)
_SESSIONS: dict[str, "SharedSession"] = {}


def _warn(message: str) -> None:
    print(f"oac: {message}", file=sys.stderr)


def session_for(db_path: str | os.PathLike[str]) -> "SharedSession | None":
    """The shared session of the run whose local state database this is (the backend asks at open)."""
    return _SESSIONS.get(os.path.abspath(db_path))


def read_outbox(conn: sqlite3.Connection) -> list[tuple[int, Outcome]]:
    conn.execute(OUTBOX_DDL)
    rows = conn.execute(f"select seq, {OUTBOX_COLUMNS} from shared_outbox order by seq").fetchall()
    return [(seq, Outcome(task_id, key, status, finished or "", tuple(json.loads(imports)) if imports else None,
                          duration, scope, _parts(parts)))
            for seq, task_id, key, status, finished, imports, duration, scope, parts in rows]


def _parts(text: str | None) -> dict[str, Any] | None:
    try:
        parts = json.loads(text) if text else None
    except ValueError:
        return None
    return parts if isinstance(parts, dict) else None


def outbox_rows(outcomes: list[Outcome]) -> list[tuple[Any, ...]]:
    return [(o.task_id, o.key, o.status, o.finished_at, json.dumps(list(o.imports)) if o.imports else None,
             o.duration_s, o.scope, json.dumps(o.parts, default=str) if o.parts else None) for o in outcomes]


class SharedSession:
    """Shared state of one run: what was known at planning, what this run adds, and whether the server is there."""

    def __init__(self, url: str, project: str, db_path: Path, *, required: bool) -> None:
        self.store = SharedStore(url, project)
        self.where = self.store.where
        self.db_path = db_path
        self.required = required
        self.known: dict[str, dict[str, Known]] = {}
        self.adoptions: dict[str, dict[str, Any]] = {}  # task → the local doit row of a pass proved elsewhere
        self.failure: str | None = None  # why the server was given up on, if it was
        self.pushed = 0
        self._lock = threading.Lock()
        self._opening: threading.Thread | None = None  # connects while the plan loads the registry (`start`)
        self._prefix = ""
        self._fetched: dict[str, dict[str, Known]] = {}
        self._error: BaseException | None = None
        self._wanted: set[str] = set()
        self._read_at = 0.0  # the newest recorded_at of the planning read (server time)
        self._parts: dict[str, tuple[str | None, dict[str, Any]]] | None = None  # `last_parts`, once read

    @property
    def online(self) -> bool:
        return self.failure is None and self.store._conn is not None

    # planning -------------------------------------------------------------------------------------------------
    def start(self, prefix: str) -> "SharedSession":
        """Connect, push the outbox and read the outcomes of every task named `prefix`… in a thread, so that
        importing the driver, connecting and the round trip overlap the plan's loading of the registry. It ends
        by itself (bounded by the connect and statement timeouts); `open` waits for it."""
        self._prefix = prefix
        self._opening = threading.Thread(target=self._connect_and_read, name="oac-shared-open", daemon=True)
        self._opening.start()
        return self

    def _connect_and_read(self) -> None:
        fsio.own_thread()  # the driver's imports list sys.path, the project root too, while the factory loads
        try:
            self.store.connect()
            self.push_outbox()  # a failed push gives up on the server by itself (one line)
            if self.failure is None:
                self._fetched = self.store.fetch_under(self._prefix)
        except BaseException as exc:  # noqa: BLE001 - handed to `open`, in the planning thread
            self._error = exc

    def open(self, task_ids: list[str]) -> "SharedSession":
        """The outcomes of every planned test (read by `start`, or here); unreachable: go on locally (or
        refuse)."""
        _SESSIONS[os.path.abspath(self.db_path)] = self
        wanted = set(task_ids)
        if self._opening is None or not all(task_id.startswith(self._prefix) for task_id in wanted):
            if self._opening is not None:
                self._opening.join()
            self._opening = None
            self.start(os.path.commonprefix(list(wanted)))
        assert self._opening is not None
        self._opening.join()
        self._opening = None
        error, self._error = self._error, None
        fetched, self._fetched = self._fetched, {}
        if isinstance(error, SharedStateError):
            if self.required:
                self.store.close()
                raise OacError(f"{error} (--require-shared-state)") from None
            self.give_up(error)
        elif error is not None:
            self.store.close()
            raise error
        self.known = only(fetched, wanted)
        self._wanted = wanted
        self._read_at = max((known.recorded_at for keys in fetched.values() for known in keys.values()),
                            default=0.0)
        return self

    def refresh(self) -> None:
        """Read again what other runners recorded since the planning read (one round trip, just before the tests
        run): the first read starts while the registry loads, so a pass another runner pushed during planning
        was missed and its test ran again here as 'never ran'."""
        if not self.online or not self._wanted:
            return
        with self._lock:
            try:
                # (a minute back: a row's recorded_at is its transaction's start, which may precede rows seen)
                newer = self.store.fetch_since(os.path.commonprefix(list(self._wanted)), self._read_at - 60)
            except SharedStateError as exc:
                self.give_up(exc)
                return
        for task_id, keys in only(newer, self._wanted).items():
            self.known.setdefault(task_id, {}).update(keys)

    def give_up(self, exc: SharedStateError) -> None:
        """The server failed: one line, then local state only (the outbox keeps this run's results). With
        --require-shared-state the run's exit code says so at the end (`tasks.run`)."""
        self.store.close()
        if self.failure is None:
            self.failure = str(exc)
            then = "the run exits 2 at the end" if self.required else "results are pushed on the next run"
            _warn(f"{exc}; going on with local state ({then})")

    def imports_of(self, task_id: str) -> list[str] | None:
        """Project files (relative) the most recent shared pass of a test loaded: they travel with its keys. None
        when it loaded none, as in the local state (a test with discovered files is keyed afresh every run)."""
        passes = [known for known in self.known.get(task_id, {}).values() if known.status == "pass"]
        if not passes:
            return None
        return list(max(passes, key=lambda known: known.recorded_at).imports or ()) or None

    def scoped_keys(self, names: dict[str, str]) -> dict[str, dict[str, str]]:
        """key-cache scope → {test id → key} of the shared outcomes (`names`: test id → task name), for a
        checkout without a key cache of its own. A key is a function of its scope for every test whose key covers
        no files, which are the only keys pushed with a scope; a test with two keys under one scope (not from
        this oac) gets none, and is keyed here."""
        found: dict[str, dict[str, str]] = {}
        torn: set[tuple[str, str]] = set()
        for test_id, name in names.items():
            for key, known in self.known.get(name, {}).items():
                if known.scope is not None:
                    keys = found.setdefault(known.scope, {})
                    if keys.setdefault(test_id, key) != key:
                        torn.add((known.scope, test_id))
        for scope, test_id in torn:
            del found[scope][test_id]
        return found

    def last_parts(self, task_id: str) -> tuple[str | None, dict[str, Any]] | None:
        """(finish time, key parts) of the test's most recent shared outcome that has parts, for `--explain`:
        read for every planned test in one round trip on first use (never on a run without --explain)."""
        if self._parts is None:
            self._parts = {}
            if self.online and self._wanted:
                with self._lock:
                    try:
                        self._parts = self.store.latest_parts(self._wanted)
                    except SharedStateError as exc:
                        self.give_up(exc)
        return self._parts.get(task_id)

    def last(self, task_id: str, key: str) -> Known | None:
        return self.known.get(task_id, {}).get(key)

    def adopt(self, task_id: str, key: str, known: Known, files: dict[str, str]) -> None:
        """Make a pass proved on another machine this machine's green state too (doit's row for it)."""
        values: dict[str, Any] = {"key": key, "status": "pass", "at": known.finished_at or "another machine",
                                  "shared": True}
        if known.imports:
            values["imports"] = list(known.imports)
        row: dict[str, Any] = {"_values_:": values, "checker:": "OacFileChecker", **files}
        if files:
            row["deps:"] = sorted(files)
        self.adoptions[task_id] = row

    # during the run -------------------------------------------------------------------------------------------
    def push_outbox(self) -> None:
        """Push what the outbox holds and remove what was pushed (called at planning and after each flush)."""
        if self.failure is not None:
            return
        with self._lock:
            conn = sqlite3.connect(self.db_path, timeout=60) if self.db_path.exists() else None
            if conn is None:
                return
            try:
                pending = read_outbox(conn)
                if not pending:
                    return
                try:
                    self.store.push([outcome for _, outcome in pending])
                except SharedStateError as exc:
                    self.give_up(exc)
                    return
                conn.execute("delete from shared_outbox where seq <= ?", (pending[-1][0],))
                conn.commit()
                self.pushed += len(pending)
            finally:
                conn.close()

    def close(self) -> None:
        self.push_outbox()
        self.store.close()
        _SESSIONS.pop(os.path.abspath(self.db_path), None)
