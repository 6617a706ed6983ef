"""Green state shared between machines, in PostgreSQL (psycopg 3): for each test, the outcome of its last run
under each key.

Content-addressed: a row is (project, task, key) → last outcome, so runners on different branches keep each
other's greens; a failure under a key replaces the pass under that key for every runner. Every value travels as
a query parameter, never as SQL text. The password is never part of the URL we accept: it comes from PGPASSWORD
or a .pgpass file, and no message, record or `--explain` line shows it.
"""

import os
import re
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import Any, NamedTuple
from urllib.parse import unquote, urlsplit

from open_agent_compiler.errors import OacError

SCHEMA_VERSION = 2
CONNECT_TIMEOUT_S = 5
STATEMENT_TIMEOUT_MS = 30_000
_SCHEMES = ("postgresql", "postgres")
_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([smhdw]?)\s*$")
_UNIT_SECONDS = {"": 86_400, "s": 1, "m": 60, "h": 3_600, "d": 86_400, "w": 604_800}

# Each step of the schema, by the version it brings the database to; applied in order under an advisory lock.
MIGRATIONS: dict[int, tuple[str, ...]] = {
    1: (
        "create table if not exists oac_outcomes ("
        " project text not null, task_id text not null, key text not null,"
        " status text not null check (status in ('pass', 'fail')),"
        " finished_at text, recorded_at timestamptz not null default now(),"
        " imports jsonb, duration_s double precision,"
        " primary key (project, task_id, key))",
        "create index if not exists oac_outcomes_recorded on oac_outcomes (project, recorded_at)",
    ),
    # the key-cache scope a key was computed under (keys.cache): a fresh checkout reads its keys from it
    2: ("alter table oac_outcomes add column if not exists scope text",),
}


class SharedStateError(OacError):
    """The shared state cannot be used (unreachable, refused, misconfigured); the message never holds a password."""


class Outcome(NamedTuple):
    """One run's outcome of one test under one key, as it is pushed."""

    task_id: str
    key: str
    status: str  # "pass" or "fail"
    finished_at: str
    imports: tuple[str, ...] | None
    duration_s: float | None
    scope: str | None = None  # the key-cache scope of the key (None: the key covers files, keyed afresh)


class Known(NamedTuple):
    """The last outcome under one key, as it is fetched."""

    status: str
    finished_at: str | None
    imports: tuple[str, ...] | None
    recorded_at: float  # seconds since the epoch: the server's commit order
    scope: str | None = None  # the key-cache scope the key was computed under, if it has one


def check_url(url: str) -> str:
    """The URL as given, if it is one we accept: postgresql://, no password in it."""
    parts = urlsplit(url)
    if parts.scheme not in _SCHEMES:
        raise SharedStateError(f"shared state URL must start with postgresql:// (got {parts.scheme or 'no'} scheme)")
    if parts.password is not None or "password=" in parts.query.lower():
        raise SharedStateError(f"shared state URL {redact(url)} holds a password: set PGPASSWORD or use a .pgpass "
                               "file instead, so that it is never printed or stored")
    return url


def redact(url: str) -> str:
    """`postgresql://user@host:port/db`: what messages show of a URL (no password, no query)."""
    parts = urlsplit(url)
    host = parts.hostname or "localhost"
    user = f"{unquote(parts.username)}@" if parts.username else ""
    port = f":{parts.port}" if parts.port else ""
    return f"{parts.scheme}://{user}{host}{port}{parts.path}"


def scrub(text: str) -> str:
    """A server or driver message with any password we could know of removed, on one line."""
    secret = os.environ.get("PGPASSWORD")
    if secret:
        text = text.replace(secret, "***")
    return " ".join(text.split())


def parse_age(text: str) -> float:
    """`30d`, `12h`, `90m`, `3600s`, `2w` (a bare number is days) → seconds."""
    found = _DURATION.match(text)
    if not found:
        raise OacError(f"--older-than {text!r}: give a number with s, m, h, d or w (e.g. 30d)")
    return float(found.group(1)) * _UNIT_SECONDS[found.group(2)]


def only(found: dict[str, dict[str, Known]], wanted: set[str]) -> dict[str, dict[str, Known]]:
    """The outcomes of the wanted tasks."""
    return {task_id: keys for task_id, keys in found.items() if task_id in wanted}


class SharedStore:
    """One connection to the shared state of one project."""

    def __init__(self, url: str, project: str) -> None:
        self.url = check_url(url)
        self.where = redact(url)
        self.project = project
        self._conn: Any = None

    # connection -----------------------------------------------------------------------------------------------
    @contextmanager
    def _errors(self, doing: str) -> Iterator[None]:
        import psycopg

        try:
            yield
        except psycopg.Error as exc:
            self.close()
            raise SharedStateError(f"shared state {self.where}: cannot {doing}: {scrub(str(exc))}") from None

    def connect(self) -> "SharedStore":
        try:
            import psycopg
        except ImportError:
            raise SharedStateError("shared state needs psycopg 3: pip install 'psycopg[binary]'") from None
        with self._errors("connect"):
            self._conn = psycopg.connect(self.url, connect_timeout=CONNECT_TIMEOUT_S, autocommit=True,
                                         options=f"-c statement_timeout={STATEMENT_TIMEOUT_MS}")
            self._migrate()
        return self

    def close(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            try:
                conn.close()
            except Exception:  # noqa: BLE001 - closing a broken connection must not hide the first error
                pass

    def _schema_version(self) -> int:
        import psycopg

        try:
            return self._conn.execute("select max(version) from oac_schema").fetchone()[0] or 0
        except psycopg.errors.UndefinedTable:
            return 0

    def _migrate(self) -> None:
        """Create or upgrade the schema, one runner at a time (an advisory lock); an up-to-date schema is only
        read, so a role with no CREATE privilege (least privilege) can use it."""
        current = self._schema_version()
        if current > SCHEMA_VERSION:
            raise SharedStateError(f"shared state {self.where}: schema version {current} is newer than this "
                                   f"oac supports ({SCHEMA_VERSION}); upgrade oac")
        if current == SCHEMA_VERSION:
            return
        with self._conn.transaction():
            self._conn.execute("select pg_advisory_xact_lock(%s)", (0x0AC5_7A7E,))
            self._conn.execute("create table if not exists oac_schema (version integer not null)")
            current = self._conn.execute("select max(version) from oac_schema").fetchone()[0] or 0
            for version in sorted(v for v in MIGRATIONS if v > current):
                for statement in MIGRATIONS[version]:
                    self._conn.execute(statement)
                self._conn.execute("insert into oac_schema (version) values (%s)", (version,))

    # reads and writes -----------------------------------------------------------------------------------------
    def fetch(self, task_ids: Iterable[str]) -> dict[str, dict[str, Known]]:
        """task → key → last outcome, for the given tasks, in one round trip."""
        wanted = set(task_ids)
        if not wanted:
            return {}
        return only(self.fetch_under(os.path.commonprefix(list(wanted))), wanted)

    def fetch_under(self, prefix: str) -> dict[str, dict[str, Known]]:
        """task → key → last outcome of every task whose name starts with `prefix`, in one round trip. A run
        selects by its tasks' common prefix and drops the others (`only`): a 5,000-name array parameter cost more
        to send and plan than the rows it saves."""
        with self._errors("read"):
            rows = self._conn.execute(
                "select task_id, key, status, finished_at, imports, extract(epoch from recorded_at)::float8, scope "
                "from oac_outcomes where project = %s and starts_with(task_id, %s)", (self.project, prefix)).fetchall()
        found: dict[str, dict[str, Known]] = {}
        for task_id, key, status, finished, imports, recorded, scope in rows:
            found.setdefault(task_id, {})[key] = Known(status, finished, tuple(imports) if imports else None,
                                                       recorded, scope)
        return found

    def push(self, outcomes: list[Outcome]) -> None:
        """Record outcomes in one transaction; the last one committed under a key is that key's outcome. Rows are
        written in a fixed order, so concurrent runners never deadlock on each other's rows."""
        if not outcomes:
            return
        from psycopg.types.json import Jsonb

        last: dict[tuple[str, str], Outcome] = {}
        for outcome in outcomes:  # the last outcome of a task under a key within one batch wins
            last[(outcome.task_id, outcome.key)] = outcome
        rows = [(self.project, o.task_id, o.key, o.status, o.finished_at,
                 Jsonb(list(o.imports)) if o.imports else None, o.duration_s, o.scope)
                for _, o in sorted(last.items())]
        with self._errors("write"), self._conn.transaction():
            with self._conn.cursor() as cursor:
                cursor.executemany(
                    "insert into oac_outcomes (project, task_id, key, status, finished_at, imports, duration_s, "
                    "scope) values (%s, %s, %s, %s, %s, %s, %s, %s) on conflict (project, task_id, key) do update "
                    "set status = excluded.status, finished_at = excluded.finished_at, recorded_at = now(), "
                    "imports = coalesce(excluded.imports, oac_outcomes.imports), duration_s = excluded.duration_s, "
                    "scope = coalesce(excluded.scope, oac_outcomes.scope)",
                    rows)

    def prune(self, older_than_s: float) -> int:
        """Forget outcomes recorded longer ago than `older_than_s`; how many were removed."""
        with self._errors("prune"):
            cursor = self._conn.execute(
                "delete from oac_outcomes where project = %s and recorded_at < now() - make_interval(secs => %s)",
                (self.project, older_than_s))
            return cursor.rowcount

    def status(self) -> dict[str, Any]:
        """How much this project holds: keys, tests, passes, failures, the oldest and newest record."""
        with self._errors("read"):
            row = self._conn.execute(
                "select count(*), count(distinct task_id), count(*) filter (where status = 'pass'), "
                "count(*) filter (where status = 'fail'), min(recorded_at)::text, max(recorded_at)::text "
                "from oac_outcomes where project = %s", (self.project,)).fetchone()
            version = self._conn.execute("select max(version) from oac_schema").fetchone()[0]
        keys, tests, passes, fails, oldest, newest = row
        return {"where": self.where, "project": self.project, "schema_version": version, "keys": keys,
                "tests": tests, "passed": passes, "failed": fails, "oldest": oldest, "newest": newest}
