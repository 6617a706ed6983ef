"""Cassettes: every model exchange of an agent test, recorded once through the loopback server acting as a proxy
to a real provider, then replayed by that server with nothing leaving the machine.

A cassette lives beside the module that defines its test: `<that folder>/cassettes/<module>/<slot>/<test>.jsonl`
(a test defined outside the project: `cassettes/<slot>/<test>.jsonl` in the project root), one file per test id;
the old project-level `cassettes/<test>.jsonl` is still read (and said once per run). A header line, then one
line per exchange (turn, API, path, the request as matched, the response's status, content type and body text as
the provider sent it, streaming events included). Headers are never stored (API keys, authorization, cookies);
the upstream key is also scrubbed from every stored text. Matching compares a request with the recorded ones of
the same turn, after `normalized`: what varies run to run (ids, dates, the scratch folder, the server's port and
secret path, tool order) is replaced, nothing else.
"""

import hashlib
import json
import os
import re
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NamedTuple

from pydantic import BaseModel, ConfigDict

from open_agent_compiler import fsio
from open_agent_compiler.errors import OacError
from open_agent_compiler.testing.invokers.protocol import InvokerError
from open_agent_compiler.testing.invokers.stream_text import plain, replaced

MODES = ("none", "once", "new_episodes", "all")
VERSION = 2  # 2: answers hold labels (`<scratch>`, ...) where the recording run's volatile strings were
FOLDER = "cassettes"
SUFFIX = ".jsonl"
UPSTREAM_ENV = ("OAC_RECORD_BASE_URL", "OAC_RECORD_API_KEY", "OAC_RECORD_MODEL")
DROPPED_KEYS = frozenset({"metadata", "user", "prompt_cache_key", "safety_identifier", "client_metadata"})
REDACTED = "<redacted>"
_UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
_DATE = re.compile(r"\b\d{4}-\d{2}-\d{2}\b|\b\d{4}/\d{2}/\d{2}\b")
_TIME = re.compile(r"\b\d{1,2}:\d{2}(:\d{2})?\b")
_WEEKDAY_DATE = re.compile(r"\b(Mon|Tue|Wed|Thu|Fri|Sat|Sun)[a-z]* (Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)[a-z]* "
                           r"\d{1,2},? \d{4}\b")
# Claude Code's per-request billing stamp in its system prompt (a hash of the request)
_STAMPS = re.compile(r"(cch|cc_version|session_id|sessionId)=[^;\s\"]+")
# what harnesses add to a tool's output: how long it took (a decimal duration), Codex's output chunk id
_DURATION = re.compile(r"\b\d+\.\d+ ?(seconds|s|ms)\b")
_CHUNK = re.compile(r"\bChunk ID: [0-9a-fA-F]+")
# in order: (pattern, its replacement, what any match of it contains: a string holding none of these — literals,
# or patterns led by a literal, which the regex engine finds fast — skips the pattern's slower scan, same result)
_MONTH = re.compile(r" (?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)")
_VARYING: tuple[tuple[re.Pattern[str], Any, tuple[str | re.Pattern[str], ...]], ...] = (
    (_UUID, "<uuid>", (re.compile(r"-[0-9a-fA-F]{4}-"),)),
    (_WEEKDAY_DATE, "<date>", (_MONTH,)),
    (_DATE, "<date>", (re.compile(r"-\d\d-"), re.compile(r"/\d\d/"))),
    (_TIME, "<time>", (re.compile(r":\d\d"),)),
    (_CHUNK, "Chunk ID: <id>", ("Chunk ID: ",)),
    (_DURATION, "<duration>", (re.compile(r"\.\d"),)),
    (_STAMPS, lambda m: f"{m.group(1)}=<stamp>", ("cch=", "cc_version=", "session_id=", "sessionId=")),
)


class Upstream(BaseModel):
    """The real provider a recording proxies to: its API root (paths keep the harness's `/v1/...`)."""

    model_config = ConfigDict(frozen=True)

    base_url: str
    api_key: str | None = None
    model: str | None = None  # replaces the model id the harness asks for

    def __repr__(self) -> str:  # never the key, whatever prints this
        return f"Upstream(base_url={self.base_url!r}, model={self.model!r})"

    __str__ = __repr__


def upstream_from(settings: dict[str, Any] | None = None) -> Upstream | None:
    """From OAC_RECORD_BASE_URL / OAC_RECORD_API_KEY / OAC_RECORD_MODEL, else `[tool.oac] record_base_url` and
    `record_model` (the key only ever from the environment)."""
    url_var, key_var, model_var = UPSTREAM_ENV
    table = settings or {}
    base_url = os.environ.get(url_var) or table.get("record_base_url")
    if not base_url:
        return None
    if not str(base_url).startswith(("http://", "https://")):
        raise OacError(f"{url_var} must be an http:// or https:// URL")
    return Upstream(base_url=str(base_url).rstrip("/"), api_key=os.environ.get(key_var) or None,
                    model=os.environ.get(model_var) or table.get("record_model") or None)


def _segment(text: str) -> str:
    """`text` as one file-name segment; when characters had to be replaced, a digest of the original keeps two
    names apart that would otherwise map to one file."""
    safe = re.sub(r"[^A-Za-z0-9._-]", "_", text).lstrip(".") or "_"
    return safe if safe == text else f"{safe}-{hashlib.sha256(text.encode()).hexdigest()[:8]}"


def legacy_rel(test_name: str) -> str:
    """Where earlier versions kept a test's cassette: `cassettes/<test name>.jsonl` in the project root."""
    return f"{FOLDER}/{re.sub(r'[^A-Za-z0-9._-]', '_', test_name).lstrip('.') or '_'}{SUFFIX}"


def _under(root: Path, file: str) -> str | None:
    """`file` relative to `root` (POSIX), or None when it is not inside it."""
    for base, path in ((os.path.abspath(root), os.path.abspath(file)),
                       (os.path.realpath(root), os.path.realpath(file))):
        rel = os.path.relpath(path, base)
        if rel != "." and not rel.startswith(".." + os.sep) and rel != ".." and not os.path.isabs(rel):
            return rel.replace(os.sep, "/")
    return None


def beside_rel(root: Path, test: Any, slot: str) -> str:
    """Where a test's cassette is written, relative to the project root: next to the module that defines the
    test, `cassettes/<module>/<slot>/<test>.jsonl` (keyed by the test id, agent:<slot>::<test>)."""
    where = getattr(test, "defined_at", None)
    rel = _under(root, where[0]) if where else None
    folder = FOLDER
    if rel is not None:
        parent, _, name = rel.rpartition("/")
        folder = f"{parent + '/' if parent else ''}{FOLDER}/{_segment(name.rpartition('.')[0] or name)}"
    return f"{folder}/{_segment(slot)}/{_segment(test.name)}{SUFFIX}"


def _is_file(root: Path, rel: str) -> bool:
    """A regular file reached without symbolic links below the root."""
    try:
        return fsio.inspect(root, rel, read=False).kind == "file"
    except OacError:
        return False


class Location(NamedTuple):
    """A test's cassette: `rel` where it is written; `found` where one is read from (`rel`, the old location,
    or None when there is none yet)."""

    root: Path
    rel: str
    found: str | None

    @property
    def legacy(self) -> bool:
        return self.found is not None and self.found != self.rel

    @property
    def shown(self) -> str:
        return self.found or self.rel


def at(root: Path, rel: str, legacy: str | None = None) -> Location:
    """The cassette written at `root/rel`, read from there, else from `legacy` when that exists."""
    found = rel if _is_file(root, rel) else legacy if legacy is not None and _is_file(root, legacy) else None
    return Location(root, rel, found)


def locate(root: Path, test: Any, slot: str) -> Location:
    return at(root, beside_rel(root, test, slot), legacy_rel(test.name))


def cassette_key_part(root: Path, test: Any, slot: str, files: Any) -> dict[str, str]:
    """The test key's part for its cassette: its label → content digest, like any file the test reads (a file
    dependency: it must exist; a cassette recorded later adds the entry, which changes the key)."""
    found = locate(root, test, slot).found
    return {files.label(root / found): files(root / found)} if found else {}


def cassette_names(root: Path, cases: Any) -> tuple[str, list[str]]:
    """(the cassettes the agent tests of `cases` read, as one text: part of the key cache's scope, so a cassette
    recorded for a test whose key was cached without one re-keys it; those read from the old location)."""
    found = [locate(root, case.test, case.slot or "") for case in cases if case.kind == "agent"]
    return (",".join(sorted(where.found for where in found if where.found)),
            sorted(where.found for where in found if where.legacy and where.found))


# matching ------------------------------------------------------------------------------------------------------
Volatile = tuple[tuple[str | re.Pattern[str], str], ...]  # (a string or pattern that varies run to run, its label)


class Memo:
    """What one test's requests already normalised to, for one volatile set: a harness resends its system prompt
    and tool descriptions with every request, and each request repeats the conversation so far."""

    def __init__(self, volatile: Volatile = ()) -> None:
        self.volatile = volatile
        # the volatile strings an answer is stored without and a replay puts back: those a raw replace is exact for
        self.put_back = [(text, label) for text, label in volatile if isinstance(text, str) and text and plain(text)]
        self.strings: dict[str, str] = {}
        self.lists: dict[str, tuple[list[Any], list[Any]]] = {}  # key → (the last raw list there, normalised)


_REPEATED = frozenset({"tools", "messages", "input"})  # lists a harness sends again, grown or as they were


def normalized(value: Any, volatile: Volatile = (), memo: Memo | None = None) -> Any:
    """`value` with what varies run to run replaced: the given volatile strings and patterns (scratch folder,
    server URL), UUIDs, dates and times, per-request stamps; keys that only identify the session dropped; tools
    sorted by name. `memo` (made for the same `volatile`): what earlier requests normalised to, reused where this
    one is equal."""
    if isinstance(value, dict):
        out = {}
        for key, item in value.items():
            if key in DROPPED_KEYS:
                continue
            out[key] = _repeated(key, item, volatile, memo) if key in _REPEATED and isinstance(item, list) \
                else normalized(item, volatile, memo)
        return out
    if isinstance(value, list):
        return [normalized(item, volatile, memo) for item in value]
    if isinstance(value, str):
        if memo is None:
            return _normalized_text(value, volatile)
        found = memo.strings.get(value)
        if found is None:
            found = memo.strings[value] = _normalized_text(value, volatile)
        return found
    return value


def _repeated(key: str, items: list[Any], volatile: Volatile, memo: Memo | None) -> list[Any]:
    """A list a harness sends again: the items equal to the last request's, at the same places, reused."""
    last_raw, last_done = memo.lists.get(key, ([], [])) if memo is not None else ([], [])
    if key == "tools" and items == last_raw:
        return last_done
    same = 0
    if key != "tools":
        while same < min(len(items), len(last_raw)) and items[same] == last_raw[same]:
            same += 1
    done = last_done[:same] + [normalized(item, volatile, memo) for item in items[same:]]
    if key == "tools":
        done = sorted(done, key=lambda tool: json.dumps(tool, sort_keys=True))
    if memo is not None:
        memo.lists[key] = (items, done)
    return done


def _normalized_text(value: str, volatile: Volatile) -> str:
    for text, label in volatile:
        if isinstance(text, str):
            value = value.replace(text, label) if text else value
        else:
            value = text.sub(label, value)
    for pattern, replacement, hint in _VARYING:
        if any(part in value if isinstance(part, str) else part.search(value) for part in hint):
            value = pattern.sub(replacement, value)
    return value


def first_difference(recorded: Any, got: Any, where: str = "") -> str | None:
    """Where `got` first differs from `recorded`, and how; None when equal."""
    if isinstance(recorded, dict) and isinstance(got, dict):
        for key in [*recorded, *(k for k in got if k not in recorded)]:
            if key not in got:
                return f"{where}.{key}: recorded {_short(recorded[key])}, now absent".lstrip(".")
            if key not in recorded:
                return f"{where}.{key}: not recorded, now {_short(got[key])}".lstrip(".")
            found = first_difference(recorded[key], got[key], f"{where}.{key}")
            if found:
                return found
        return None
    if isinstance(recorded, list) and isinstance(got, list):
        for index, (old, new) in enumerate(zip(recorded, got)):
            found = first_difference(old, new, f"{where}[{index}]")
            if found:
                return found
        if len(recorded) != len(got):
            return f"{where or 'request'}: recorded {len(recorded)} items, now {len(got)}"
        return None
    if recorded != got:
        if isinstance(recorded, str) and isinstance(got, str):
            at = next((i for i, (a, b) in enumerate(zip(recorded, got)) if a != b), min(len(recorded), len(got)))
            start = max(at - 30, 0)
            return (f"{where.lstrip('.') or 'request'}: recorded {_short(recorded[start:at + 50])}, "
                    f"now {_short(got[start:at + 50])}")
        return f"{where.lstrip('.') or 'request'}: recorded {_short(recorded)}, now {_short(got)}"
    return None


def _short(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 120 else text[:117] + "…"


# the file ------------------------------------------------------------------------------------------------------
class Exchange(BaseModel):
    model_config = ConfigDict(frozen=True)

    turn: int
    api: str
    path: str
    request: Any
    status: int
    content_type: str
    response: str


def read_cassette(path: Path) -> tuple[dict[str, Any], list[Exchange]]:
    """(header, exchanges); a damaged file (or anything but a regular file) is an InvokerError naming it."""
    try:
        entry = fsio.inspect(path.parent, path.name)
        if entry.data is None:
            raise ValueError(f"a {entry.kind}, not a regular file")
        text = entry.data.decode("utf-8")
        lines = [json.loads(line) for line in text.splitlines() if line.strip()]
        header = lines[0] if lines and isinstance(lines[0], dict) and "cassette" in lines[0] else {}
        return header, [Exchange.model_validate(line) for line in lines[1 if header else 0:]]
    except (OSError, ValueError, OacError) as exc:
        raise InvokerError(f"cassette {path.name} cannot be read: {' '.join(str(exc).split())[:200]}") from None


def write_cassette(root: Path, rel: str, test_name: str, model: str | None, exchanges: list[Exchange]) -> None:
    """Whole or not at all, inside the project root and never through a symbolic link (`fsio`)."""
    header = {"cassette": VERSION, "test": test_name, "model": model,
              "recorded": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    lines = [json.dumps(header, ensure_ascii=False)]
    lines += [json.dumps(exchange.model_dump(), ensure_ascii=False, sort_keys=False) for exchange in exchanges]
    try:
        fsio.write_file(root, rel, ("\n".join(lines) + "\n").encode("utf-8"), show=rel)
    except OacError as exc:
        raise InvokerError(str(exc)) from None


# the tape the server plays -------------------------------------------------------------------------------------
FORWARDED_HEADERS = ("content-type", "accept", "anthropic-version", "anthropic-beta", "openai-beta")


class Tape:
    """What the loopback server answers model requests with, for one test: replayed exchanges and, when
    recording, the upstream's answers (forwarded with the upstream key, stored without it)."""

    def __init__(self, where: Location, test_name: str, mode: str, upstream: Upstream | None) -> None:
        self.labelled = False  # the cassette read has labels in its answers (version 2); older ones are as sent
        self.where = where
        self.test_name = test_name
        self.mode = mode
        self.upstream = upstream
        self.recorded: list[Exchange] = []
        self.model: str | None = upstream.model if upstream else None
        exists = where.found is not None
        if mode != "all" and exists:
            header, self.recorded = read_cassette(where.root / where.shown)
            self.model = self.model or header.get("model")
            self.labelled = isinstance(header.get("cassette"), int) and header["cassette"] >= 2
        self.replaying = mode in ("none", "once") and exists or mode == "new_episodes"
        self.recording = mode == "all" or mode == "new_episodes" or (mode == "once" and not exists)
        if self.recording and upstream is None:
            raise InvokerError(f"--record {mode} needs a provider to record from: set {UPSTREAM_ENV[0]} (and "
                               f"{UPSTREAM_ENV[1]}, {UPSTREAM_ENV[2]}) or [tool.oac] record_base_url")
        if self.recording:  # refused before the provider is paid for, not after (a symlink on the way)
            try:
                fsio.check_writable_file(where.root, where.rel)
            except OacError as exc:
                raise InvokerError(str(exc)) from None
        self.used: set[int] = set()
        self.played: list[Exchange] = []  # what this run answered with, in order: the cassette written at the end
        self.volatile: Volatile = ()
        self._memo = Memo()  # what this test's requests normalised to, for the current volatile set

    def secrets(self) -> list[str]:
        return [key for key in ((self.upstream.api_key if self.upstream else None),) if key]

    def _scrub(self, text: str) -> str:
        for secret in self.secrets():
            text = text.replace(secret, REDACTED)
        return text

    def answer(self, turn: int, api: str, path: str, headers: Any, raw: bytes,
               parsed: Any = None) -> tuple[int, str, bytes]:
        """(status, content type, body) for one model request (`parsed`: `raw` as JSON, when the server has it);
        a request matching no recorded one while only replaying is an InvokerError naming the first difference
        (the runner prefixes the turn)."""
        body = parsed
        if body is None:
            try:
                body = json.loads(raw or b"{}")
            except ValueError:
                body = {"raw": raw.decode("utf-8", "replace")}
        scrubbed = json.loads(self._scrub(json.dumps(body))) if self.secrets() else body  # (no key: nothing to scrub)
        if self._memo.volatile != self.volatile:
            self._memo = Memo(self.volatile)
        request = normalized(scrubbed, self.volatile, self._memo)
        if self.replaying:
            candidates = [i for i, e in enumerate(self.recorded) if i not in self.used and e.turn == turn]
            for index in candidates:
                if self.recorded[index].request == request and self.recorded[index].path == path:
                    self.used.add(index)
                    exchange = self.recorded[index]
                    self.played.append(exchange)
                    answer = self._unlabelled(exchange.response) if self.labelled else exchange.response
                    return exchange.status, exchange.content_type, answer.encode("utf-8")
            if not self.recording:
                raise InvokerError(self._mismatch(turn, api, path, request, candidates))
        status, content_type, response = self._forward(path, headers, body)
        if not self.model and isinstance(body, dict) and isinstance(body.get("model"), str):
            self.model = body["model"]  # no upstream model named: the one the harness asked for
        # stored: without the key (some echo it), the run's volatile strings as labels (a model names files by
        # their absolute path); the harness gets what a replay will give it
        text = replaced(response.decode("utf-8", "replace"), self._labels())
        self.played.append(Exchange(turn=turn, api=api, path=path, request=request, status=status,
                                    content_type=content_type, response=text))
        return status, content_type, self._unlabelled(text).encode("utf-8")

    def _labels(self) -> list[tuple[str, str]]:
        """What an answer is stored without: the key, then the volatile strings a replay puts back."""
        return [(secret, REDACTED) for secret in self.secrets()] + self._memo.put_back

    def _unlabelled(self, text: str) -> str:
        """A stored answer with this run's volatile strings where the recording run's were."""
        for value, label in self._memo.put_back:
            if label in text:
                text = text.replace(label, value)
        return text

    def _mismatch(self, turn: int, api: str, path: str, request: Any, candidates: list[int]) -> str:
        where = f"cassette {self.where.shown}"
        if not candidates:
            return (f"{api} request to {path} matches no recorded exchange of turn {turn} in {where} "
                    "(re-record with --record)")
        same_path = [i for i in candidates if self.recorded[i].path == path] or candidates
        nearest = min(same_path, key=lambda i: _distance(self.recorded[i].request, request))
        difference = first_difference(self.recorded[nearest].request, request) or f"path {path}"
        return f"{api} request differs from the recorded one in {where}: {difference} (re-record with --record)"

    def _forward(self, path: str, headers: Any, body: dict[str, Any]) -> tuple[int, str, bytes]:
        assert self.upstream is not None
        if self.upstream.model and isinstance(body, dict) and "model" in body:
            body = dict(body, model=self.upstream.model)
        sent = {name: headers[name] for name in FORWARDED_HEADERS if headers.get(name)}
        if self.upstream.api_key:
            if path.endswith("/messages"):
                sent["x-api-key"] = self.upstream.api_key
            else:
                sent["authorization"] = f"Bearer {self.upstream.api_key}"
        request = urllib.request.Request(self.upstream.base_url + path, data=json.dumps(body).encode(), headers=sent,
                                         method="POST")
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}), _NoRedirect())
        try:
            with opener.open(request, timeout=600) as response:
                return response.status, response.headers.get("content-type", ""), response.read()
        except urllib.error.HTTPError as exc:
            return exc.code, exc.headers.get("content-type", "") if exc.headers else "", exc.read()
        except (OSError, ValueError) as exc:
            raise InvokerError(f"recording: the upstream {self.upstream.base_url} did not answer: "
                               f"{self._scrub(' '.join(str(exc).split()))}") from None

    def save(self) -> None:
        """After a recording run: the exchanges this run used, in order (replayed and new)."""
        if self.recording and self.played:
            write_cassette(self.where.root, self.where.rel, self.test_name, self.model, self.played)


def _distance(recorded: Any, got: Any) -> int:
    """How unalike two requests are (for naming the nearest recorded one): differing characters of their text."""
    a, b = json.dumps(recorded, sort_keys=True), json.dumps(got, sort_keys=True)
    prefix = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
    return len(a) + len(b) - 2 * prefix


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    """A redirect is never followed: the key is never sent anywhere else."""

    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


_NOT_SEARCHED = frozenset({".git", ".oac", ".venv", "venv", "node_modules", "__pycache__", ".tox", ".nox"})


def cassette_files(root: Path) -> Iterator[str]:
    """Every cassette in the project (relative paths): files under a `cassettes/` folder whose first line is a
    cassette header, found without following symbolic links; the old location's files first."""
    for folder, dirs, names in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in _NOT_SEARCHED and not d.startswith("."))
        rel = _under(root, folder) if folder != str(root) else ""
        parts = rel.split("/") if rel else []
        if FOLDER not in parts:
            continue
        for name in sorted(names):
            path = os.path.join(folder, name)
            if name.endswith(SUFFIX) and not os.path.islink(path) and _header(Path(path)).get("cassette"):
                yield f"{rel}/{name}"


def _header(path: Path) -> dict[str, Any]:
    try:
        with open(path, "rb") as handle:
            header = json.loads(handle.readline())
    except (OSError, ValueError):
        return {}
    return header if isinstance(header, dict) else {}


def listing(root: Path, used: set[str]) -> Iterator[dict[str, Any]]:
    """Every cassette in the project: path, test, model, size, age in days, whether a test reads it, whether
    it is in the old location (`cassettes/<test>.jsonl` in the root)."""
    for rel in cassette_files(root):
        path = root / rel
        header = _header(path)
        found = path.stat()
        yield {"path": rel, "test": header.get("test"), "model": header.get("model"), "size": found.st_size,
               "age_days": round((time.time() - found.st_mtime) / 86400, 1), "used": rel in used,
               "legacy": "/" not in rel[len(FOLDER) + 1:] and rel.startswith(FOLDER + "/")}
