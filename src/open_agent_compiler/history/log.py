"""Test results: the record shape, and the append-only JSONL log (one locked write per batch of lines)."""

import fcntl
import json
import math
import os
import sys
import time
from collections.abc import Iterator
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from open_agent_compiler import fsio
from open_agent_compiler.errors import OacError, ResultsError
from open_agent_compiler.model.core.base import unvalidated
from open_agent_compiler.model.core.evaluator import EvaluatorResult
# the history views' fast reader (`history.scan`, which imports no pydantic); re-exported from here
from open_agent_compiler.history import scan as history_scan
from open_agent_compiler.history.scan import SlimRecord, scan_records  # noqa: F401

Status = Literal["pass", "fail", "skipped", "not_runnable"]


def __getattr__(name: str) -> Any:
    if name == "_SLIM":  # history_scan's record pattern, compiled when asked (~3 ms): a test run never uses it
        return history_scan._SLIM
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


_ZONES: dict[int, timezone] = {}  # UTC offset (s) → its fixed-offset zone
# the last whole second asked: (second, its local time "YYYY-MM-DDTHH:MM:SS", its UTC offset "+HH:MM")
_SECOND: list[tuple[int, str, str]] = [(-1, "", "")]


def now_iso() -> str:
    """Local time with its UTC offset, to the millisecond, as `datetime.now().astimezone()` gives it. That looks
    the local zone up twice per call (~8 us a test); here `localtime` is asked and the text of the whole second
    formatted once per whole second, and each call adds its milliseconds. Exact: the fraction is rounded to
    microseconds as `datetime.fromtimestamp` rounds it (half to even, carrying into the next second), `localtime`
    takes whole seconds, and zone changes fall on whole seconds (a process that changes TZ itself keeps the old
    zone until the next second)."""
    fraction, whole = math.modf(time.time())
    micro = round(fraction * 1e6)
    if micro >= 1_000_000:
        micro -= 1_000_000
        whole += 1.0
    second = int(whole)
    known, head, offset = _SECOND[0]
    if second != known:
        gmtoff = time.localtime(second).tm_gmtoff
        zone = _ZONES.get(gmtoff) or _ZONES.setdefault(gmtoff, timezone(timedelta(seconds=gmtoff)))
        text = datetime.fromtimestamp(second, zone).isoformat(timespec="seconds")
        head, offset = text[:19], text[19:]
        _SECOND[0] = (second, head, offset)
    return f"{head}.{micro // 1000:03d}{offset}"


class TestOutcome(BaseModel):
    """What running one test produced, before it is stamped into a record."""

    model_config = ConfigDict(frozen=True, defer_build=True)  # warm runs use none
    __test__ = False

    status: Status
    score: float
    evidence: tuple[EvaluatorResult, ...] = ()
    skip_reason: str | None = None
    duration_s: float = 0.0
    mock_source: str | None = None
    turns: tuple[tuple[str, ...], ...] = ()  # agent tests: the tool names each turn called, in order

    @property
    def passed(self) -> bool:
        return self.status == "pass"

    def first_failure(self) -> str:
        for result in self.evidence:
            if not result.passed and not result.skipped:
                return f"{result.name}: {result.evidence}" if result.evidence else result.name
        return self.skip_reason or self.status


class TestRecord(BaseModel):
    """One JSONL line: self-describing, so a reader needs nothing else to interpret it."""

    model_config = ConfigDict(frozen=True, defer_build=True)  # warm runs use none
    __test__ = False

    timestamp: str
    run_id: str
    test_id: str
    test_kind: str
    test_name: str
    target_name: str
    status: Status
    passed: bool
    score: float
    duration_s: float
    variant: str | None
    access_profile: str | None
    mock_profile: str | None
    model: str | None
    dialect: str | None
    config: str | None = None
    agent_state_hash: str
    mock_set_hash: str | None
    composite_hash: str
    evidence: list[dict[str, Any]]
    skip_reason: str | None = None
    invoker: str | None = None  # agent tests: who ran it (see testing.invokers)
    turns: list[list[str]] | None = None  # agent tests: the tool names each turn called (for `oac report`)
    repeat: int | None = None  # `--repeat N`: which run of the test this is (1..N); None: not a repeat
    # `--repeat N`, the test's one summary record after its N runs: runs, passes, pass_rate, pass_at_k, pass_hat_k
    repeats: dict[str, Any] | None = None
    flaky: bool | None = None  # it both passed and failed in its repeats
    # where the test is defined: its file relative to the project root, the line of its ToolTest/CapabilityTest/
    # AgentTest construction (None: unknown, e.g. built by a loop in library code, or an older record)
    file: str | None = None
    line: int | None = None
    pipeline: str | None = None  # the CI pipeline of the run (tasks.pipeline); None: the run is its own
    shard: str | None = None  # `K/N` of a sharded run
    commit: str | None = None  # the commit under test

    @classmethod
    def of_fields(cls, fields: dict[str, Any]) -> "TestRecord":
        """What `model_construct(**fields)` builds (no validation: our own typed values), without its loop over
        every field's aliases and defaults when `fields` names each field once (this model has no aliases, extras,
        private attributes or post-init): half of a record's cost. Anything else goes to `model_construct`.
        `tests/testing/test_record_fields.py` holds the two to the same record and the same JSON."""
        if fields.keys() != _RECORD_FIELDS:
            return cls.model_construct(**fields)
        return unvalidated(cls, fields, set(fields))


_RECORD_FIELDS = frozenset(TestRecord.model_fields)


class ResultsLog:
    """Appends records to a JSONL file: O_APPEND, one `write` per batch of whole lines, under an exclusive flock."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._fd: int | None = None

    def _open(self) -> int:
        if self._fd is None:
            # a regular file only (umask's mode), reached without symlinks below `.oac/`'s project (fsio)
            path = Path(os.path.abspath(self.path))
            try:
                self._fd = fsio.open_append(fsio.trusted_root(path), str(path), show=str(self.path))
            except OacError as exc:
                raise ResultsError(f"cannot open results file {self.path}: {exc}") from None
        return self._fd

    def append(self, record: TestRecord) -> None:
        self.write_lines([(record.model_dump_json() + "\n").encode()])

    def write_lines(self, lines: list[bytes]) -> None:
        """Append serialised records (each ending in a newline) with one write under the lock."""
        line = b"".join(lines)
        fd = self._open()
        fcntl.flock(fd, fcntl.LOCK_EX)
        try:
            size = os.fstat(fd).st_size
            if size and os.pread(fd, 1, size - 1) != b"\n":
                line = b"\n" + line  # a torn line from a crashed writer stays alone on its line
            view = memoryview(line)
            while view:
                written = os.write(fd, view)
                view = view[written:]
        except OSError as exc:  # a full disk (ENOSPC), a quota, an I/O error: one line, never a traceback
            raise ResultsError(f"cannot write results file {self.path}: {exc.strerror or exc}") from None
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


def read_records(path: Path, warn: Any = None) -> Iterator[dict[str, Any]]:
    """Yield each JSON object line; a corrupt line is skipped with a warning naming its line number."""
    say = warn or (lambda message: print(message, file=sys.stderr))
    try:
        handle = open(path, "rb")
    except FileNotFoundError:
        return
    except OSError as exc:
        raise ResultsError(f"cannot read results file {path}: {exc.strerror}") from None
    with handle:
        for number, raw in enumerate(handle, start=1):
            if not raw.strip():
                continue
            try:
                value = json.loads(raw)
            except ValueError:
                say(f"oac: warning: {path}:{number}: skipping a corrupt line")
                continue
            if not isinstance(value, dict):
                say(f"oac: warning: {path}:{number}: skipping a line that is not a JSON object")
                continue
            yield value

