"""Green state shared between machines, in PostgreSQL (psycopg 3): for each test, the outcome of its last run
under each key.

Content-addressed: a row is (project, task, key) → last outcome, so runners on different branches keep each
other's greens; a failure under a key replaces the pass under that key for every runner. Every value travels as
a query parameter, never as SQL text. The password is never part of the URL we accept: it comes from PGPASSWORD
or a .pgpass file, and no message, record or `--explain` line shows it.
"""

import json
import os
import re
import socket
import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from datetime import datetime
from typing import Any, NamedTuple
from urllib.parse import unquote, urlsplit

from open_agent_compiler.errors import OacError

SCHEMA_VERSION = 3
CONNECT_TIMEOUT_S = 5
STATEMENT_TIMEOUT_MS = 30_000
ROUND_TRIP_ENV = "OAC_STATE_TIMEOUT_S"  # seconds one round trip may take before the server is given up (default 35)
_ISO = r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?([+-]\d\d:\d\d|Z)$"
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
    # the named parts of the key (keys.key), so `--explain` on another machine can say what changed since
    3: ("alter table oac_outcomes add column if not exists parts jsonb",),
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
    parts: dict[str, Any] | None = None  # the key's named parts (`KeyParts.json_view`), for `--explain` elsewhere


class Known(NamedTuple):
    """The last outcome under one key, as it is fetched."""

    status: str
    finished_at: str | None
    imports: tuple[str, ...] | None
    recorded_at: float  # seconds since the epoch: the server's commit order
    scope: str | None = None  # the key-cache scope the key was computed under, if it has one


_HOST = re.compile(r"^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9._%~-]*)(:\d{0,5})?$")
_MALFORMED = "shared state URL is malformed ({}); it is not shown, as it may hold a secret"


def _split(url: str) -> tuple[str, str, str, str, str]:
    """(scheme, user, host list, path, query) of a URL we accept; SharedStateError naming what is wrong, never
    the URL itself. libpq's multi-host form (`h1:5432,h2:5433`) is valid."""
    try:
        parts = urlsplit(url)
    except ValueError as exc:  # e.g. an unclosed IPv6 `[`
        raise SharedStateError(_MALFORMED.format(str(exc).split(":")[0])) from None
    if parts.scheme not in _SCHEMES:
        raise SharedStateError(f"shared state URL must start with postgresql:// (got {parts.scheme or 'no'} scheme)")
    userinfo, at, hosts = parts.netloc.rpartition("@")
    user, colon, _ = userinfo.partition(":")
    if colon or "@" in url[len(parts.scheme) + 3 + len(parts.netloc):]:  # `@` later: a password with `/?#` in it
        raise _password_error()
    if not all(_HOST.match(host) for host in hosts.split(",")):
        raise SharedStateError(_MALFORMED.format("a host or port is not host[:port]"))
    return parts.scheme, unquote(user) if at else "", hosts, parts.path, parts.query


def _password_error() -> SharedStateError:
    return SharedStateError("shared state URL holds a password: set PGPASSWORD or use a .pgpass file instead, "
                            "so that it is never printed or stored (the URL is not shown)")


def _decoded(text: str) -> str:
    """Percent-decoded until it no longer changes (`pass%2577ord` is `password` to a careless second decoder)."""
    for _ in range(8):
        decoded = unquote(text.replace("+", " "))
        if decoded == text:
            break
        text = decoded
    return text


def check_url(url: str) -> str:
    """The URL as given, if it is one we accept: postgresql://, well formed, no password in it."""
    _, _, _, _, query = _split(url)
    if "password" in _decoded(query).lower():
        raise _password_error()
    if "%" in query and not _valid_escapes(query):  # libpq would quote the broken token (a secret?) in its error
        raise SharedStateError(_MALFORMED.format("a stray '%' in its query"))
    return url


def _valid_escapes(text: str) -> bool:
    return re.fullmatch(r"(?:[^%]|%[0-9A-Fa-f]{2})*", text) is not None


def redact(url: str) -> str:
    """`postgresql://user@host:port/db`: what messages show of a URL (no password, no query); a URL that does not
    parse shows as `postgresql://(malformed)`."""
    try:
        scheme, user, hosts, path, _ = _split(url)
    except SharedStateError:
        return "postgresql://(malformed)"
    return f"{scheme}://{user + '@' if user else ''}{hosts or 'localhost'}{path}"


def _secrets() -> list[str]:
    """Every password this process could hand the driver: PGPASSWORD, and those in the service and password
    files libpq reads (PGSERVICEFILE, ~/.pg_service.conf, PGPASSFILE, ~/.pgpass)."""
    found = [os.environ.get("PGPASSWORD") or ""]
    home = os.path.expanduser("~")
    for path in (os.environ.get("PGSERVICEFILE") or os.path.join(home, ".pg_service.conf"),):
        for line in _lines(path):
            name, eq, value = line.partition("=")
            if eq and name.strip().lower() == "password":
                found.append(value.strip())
    for line in _lines(os.environ.get("PGPASSFILE") or os.path.join(home, ".pgpass")):
        fields = re.split(r"(?<!\\):", line.rstrip("\n"), maxsplit=4)
        if len(fields) == 5:
            found.append(fields[4])
            found.append(fields[4].replace("\\:", ":").replace("\\\\", "\\"))
    return sorted({secret for secret in found if secret}, key=len, reverse=True)


def _lines(path: str) -> list[str]:
    try:
        with open(path, encoding="utf-8", errors="replace") as file:
            return file.read(1 << 20).splitlines()
    except OSError:
        return []


def scrub(text: str) -> str:
    """A server or driver message with any password we could know of removed, on one line."""
    for secret in _secrets():
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


def finished_epoch(finished_at: str | None) -> float | None:
    """Seconds since the epoch of an ISO finish time with its UTC offset; None when it is not one."""
    if not finished_at or not re.match(_ISO, finished_at):
        return None
    try:
        return datetime.fromisoformat(finished_at.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


def _later(outcome: Outcome, than: Outcome) -> bool:
    """Whether `outcome` finished after `than` (at the same time or unknown: a failure wins, else the later one
    given)."""
    new, old = finished_epoch(outcome.finished_at), finished_epoch(than.finished_at)
    if new is None or old is None or new == old:
        return outcome.status == "fail" or than.status == "pass"
    return new > old


def _json_text(value: Any) -> str:
    return json.dumps(value, default=str)  # (key parts as `--explain` saves them: any odd value as its text)


def round_trip_s() -> float:
    try:
        return max(0.1, float(os.environ.get(ROUND_TRIP_ENV) or STATEMENT_TIMEOUT_MS / 1000 + 5))
    except ValueError:
        return STATEMENT_TIMEOUT_MS / 1000 + 5


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

        # A server (or network) that goes silent keeps the connection open and answers nothing: the statement
        # timeout is the server's, so the socket is shut down here when a round trip outlasts ours.
        limit = round_trip_s()
        cut = threading.Event()
        timer = threading.Timer(limit, self._cut, (cut,))
        timer.daemon = True
        timer.start()
        try:
            yield
        except psycopg.Error as exc:
            self.close()
            why = f"no answer within {limit:g} s" if cut.is_set() else scrub(str(exc))
            raise SharedStateError(f"shared state {self.where}: cannot {doing}: {why}") from None
        finally:
            timer.cancel()

    def _cut(self, cut: threading.Event) -> None:
        """Shut the connection's socket down: the driver's blocked read returns with an error at once."""
        conn = self._conn
        if conn is None:
            return
        try:
            fd = conn.pgconn.socket
            cut.set()
            with socket.socket(fileno=os.dup(fd)) as sock:
                sock.shutdown(socket.SHUT_RDWR)
        except Exception:  # noqa: BLE001 - already closed: nothing is blocked on it
            pass

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

    def fetch_since(self, prefix: str, since: float) -> dict[str, dict[str, Known]]:
        """Like `fetch_under`, only the rows recorded at or after `since` (seconds since the epoch, server time)."""
        with self._errors("read"):
            rows = self._conn.execute(
                "select task_id, key, status, finished_at, imports, extract(epoch from recorded_at)::float8, scope "
                "from oac_outcomes where project = %s and starts_with(task_id, %s) and recorded_at >= "
                "to_timestamp(%s)", (self.project, prefix, since)).fetchall()
        found: dict[str, dict[str, Known]] = {}
        for task_id, key, status, finished, imports, recorded, scope in rows:
            found.setdefault(task_id, {})[key] = Known(status, finished, tuple(imports) if imports else None,
                                                       recorded, scope)
        return found

    def outcomes(self) -> list[Outcome]:
        """Every outcome this project holds, as it would be pushed (`oac state export`), in a fixed order."""
        with self._errors("read"):
            rows = self._conn.execute(
                "select task_id, key, status, coalesce(finished_at, ''), imports, duration_s, scope, parts "
                "from oac_outcomes where project = %s order by task_id, key", (self.project,)).fetchall()
        return [Outcome(task_id, key, status, finished, tuple(imports) if imports else None, duration, scope,
                        parts if isinstance(parts, dict) else None)
                for task_id, key, status, finished, imports, duration, scope, parts in rows]

    def latest_parts(self, task_ids: Iterable[str]) -> dict[str, tuple[str | None, dict[str, Any]]]:
        """task → (finish time, key parts) of its most recently recorded outcome that has parts (rows pushed by
        an oac from before they were shared have none), in one round trip."""
        wanted = sorted(set(task_ids))
        if not wanted:
            return {}
        with self._errors("read"):
            rows = self._conn.execute(
                "select distinct on (task_id) task_id, finished_at, parts from oac_outcomes where project = %s "
                "and task_id = any(%s) and parts is not null order by task_id, recorded_at desc",
                (self.project, wanted)).fetchall()
        return {task_id: (finished, parts) for task_id, finished, parts in rows if isinstance(parts, dict)}

    def push(self, outcomes: list[Outcome]) -> None:
        """Record outcomes in one transaction; the last one committed under a key is that key's outcome. Rows are
        written in a fixed order, so concurrent runners never deadlock on each other's rows."""
        if not outcomes:
            return
        from psycopg.types.json import Jsonb

        last: dict[tuple[str, str], Outcome] = {}
        for outcome in outcomes:  # within one batch too, the outcome that finished last wins
            known = last.get((outcome.task_id, outcome.key))
            if known is None or _later(outcome, known):
                last[(outcome.task_id, outcome.key)] = outcome
        rows = [(self.project, o.task_id, o.key, o.status, o.finished_at,
                 Jsonb(list(o.imports)) if o.imports else None, o.duration_s, o.scope,
                 Jsonb(o.parts, dumps=_json_text) if o.parts else None, finished_epoch(o.finished_at))
                for _, o in sorted(last.items())]
        with self._errors("write"), self._conn.transaction():
            with self._conn.cursor() as cursor:
                # The last *finished* run under a key decides, not the last pushed: an outcome that waited in an
                # outbox replaces a row only if it finished later (at the same time, a failure wins).
                cursor.executemany(
                    "insert into oac_outcomes (project, task_id, key, status, finished_at, imports, duration_s, "
                    "scope, parts) values (%s, %s, %s, %s, %s, %s, %s, %s, %s) on conflict (project, task_id, key) "
                    "do update "
                    "set status = excluded.status, finished_at = excluded.finished_at, recorded_at = now(), "
                    "imports = coalesce(excluded.imports, oac_outcomes.imports), duration_s = excluded.duration_s, "
                    "scope = coalesce(excluded.scope, oac_outcomes.scope), "
                    "parts = coalesce(excluded.parts, oac_outcomes.parts) "
                    "where %s::float8 is null or oac_outcomes.finished_at is null "
                    f"or oac_outcomes.finished_at !~ '{_ISO}' "
                    "or (case when oac_outcomes.finished_at ~ '" + _ISO + "' then extract(epoch from "
                    "oac_outcomes.finished_at::timestamptz) end) < %s::float8 or ((case when oac_outcomes.finished_at "
                    "~ '" + _ISO + "' then extract(epoch from oac_outcomes.finished_at::timestamptz) end) = %s::float8 "
                    "and (excluded.status = 'fail' or oac_outcomes.status = 'pass'))",
                    [(*row, row[-1], row[-1]) for row in rows])

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
