"""The test history read back from the JSONL results log: runs, per-test timelines, failing, flaky and slow tests,
and the time green skipping saved. Pure data over the log as `history_scan` reads it; `oac results` and
`oac report` show it.

What the records can and cannot tell (they are written only for tests that ran):
- a *run* is the set of records sharing a `run_id`, in the order the log holds them;
- a test counts as *skipped green* in a run when its latest record before that run passed and the run has no
  record of it. A run narrowed with --filter/--kind therefore counts the tests it left out as skipped: the saved
  time is an upper bound for such runs, exact for full runs;
- *flaky*: the same test passed and failed under the same key (`composite_hash`): nothing it reads changed.
- a test's status and duration are those of its latest record as the scanner reads them: another writer's status
  outside the four counts as pass or fail by its `passed` field, in the run's counts and in the test's status alike.
"""

import json
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from functools import cached_property
from pathlib import Path
from typing import Any, Protocol

from open_agent_compiler.errors import OacError
from open_agent_compiler.history.scan import Scanned, read_log, scan

STATUSES = ("pass", "fail", "skipped", "not_runnable")
_RELATIVE = re.compile(r"^(\d+)([dhm])$")


def parse_since(text: str, now: datetime | None = None) -> datetime:
    """`7d`, `12h`, `30m` (before now), or an ISO date/datetime (local time when it names no offset)."""
    now = now or datetime.now().astimezone()
    relative = _RELATIVE.match(text.strip())
    if relative:
        amount, unit = int(relative.group(1)), relative.group(2)
        unit_name = {"d": "days", "h": "hours", "m": "minutes"}[unit]
        return now - timedelta(**{unit_name: amount})
    try:
        moment = datetime.fromisoformat(text.strip())
    except ValueError:
        raise OacError(f"--since {text!r}: expected 7d, 12h, 30m or an ISO date such as 2026-11-30") from None
    return moment if moment.tzinfo is not None else moment.astimezone()


def _moment(stamp: Any) -> datetime | None:
    if not isinstance(stamp, str):
        return None
    try:
        moment = datetime.fromisoformat(stamp)
    except ValueError:
        return None
    return moment if moment.tzinfo is not None else moment.astimezone()


def first_failure(evidence: Any) -> str:
    """The first failing evaluator's `name: evidence`, as the run's FAIL line showed it."""
    for item in evidence if isinstance(evidence, list) else ():
        if isinstance(item, dict) and not item.get("passed", True) and not item.get("skipped", False):
            name, text = str(item.get("name", "?")), str(item.get("evidence", ""))
            return f"{name}: {text}" if text else name
    return ""


@dataclass
class Run:
    run_id: str
    index: int
    started: str = ""
    finished: str = ""
    counts: dict[str, int] = field(default_factory=lambda: dict.fromkeys(STATUSES, 0))
    duration_s: float = 0.0
    skipped_green: int = 0  # tests green before this run and not recorded in it (see the module docstring)
    saved_s: float = 0.0  # the last green durations of those tests
    first: tuple[int, int] = (0, 0)  # where its first record's line is in the log (its pipeline, shard, commit)
    pipeline: str | None = None  # of its first record: the CI pipeline (None: the run is its own), `K/N`, commit
    shard: str | None = None
    commit: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return {"run_id": self.run_id, "started": self.started, "finished": self.finished, "counts": self.counts,
                "ran_s": round(self.duration_s, 3), "skipped_green": self.skipped_green,
                "saved_s": round(self.saved_s, 3)}


@dataclass
class TestHistory:
    """One test's timeline. Its latest record and latest failure are kept as their raw lines and decoded on first
    use: `oac results` decodes only the tests it shows (the failing ones, the slowest), `oac report` every one."""

    __test__ = False

    test_id: str
    points: list[tuple[int, str, float]] = field(default_factory=list)  # (run index, status, duration)
    point_keys: list[bytes | None] = field(default_factory=list)  # composite_hash of each point, UTF-8
    fail_keys: list[bytes | None] = field(default_factory=list)  # composite_hash of each failing point
    last_raw: bytes = b"{}"  # the latest record's line
    failure_raw: bytes | None = None  # the latest failing record's line

    @cached_property
    def last(self) -> dict[str, Any]:
        """The latest record."""
        return _decoded(self.last_raw)

    @cached_property
    def last_failure(self) -> dict[str, Any] | None:
        """The latest failing record."""
        if self.failure_raw is None:
            return None
        return self.last if self.failure_raw is self.last_raw else _decoded(self.failure_raw)

    @property
    def name(self) -> str:
        return str(self.last.get("test_name", self.test_id))

    @property
    def kind(self) -> str:
        return str(self.last.get("test_kind", ""))

    @property
    def target(self) -> str:
        return str(self.last.get("target_name", ""))

    @property
    def invoker(self) -> str | None:
        return self.last.get("invoker") or None

    @property
    def status(self) -> str:
        return self.points[-1][1] if self.points else "?"

    @property
    def keys(self) -> dict[str, set[str]]:
        """composite_hash -> the statuses seen under it."""
        seen: dict[str, set[str]] = {}
        for key, (_, status, _) in zip(self.point_keys, self.points):
            if key is not None:
                seen.setdefault(_text(key), set()).add(status)
        return seen

    @property
    def flaky(self) -> bool:
        """Passed and failed under one key (nothing it reads changed)."""
        if not self.fail_keys:
            return False
        passed = {key for key, point in zip(self.point_keys, self.points) if point[1] == "pass"}
        passed.discard(None)
        return not passed.isdisjoint(self.fail_keys)

    @property
    def duration_s(self) -> float:
        return self.points[-1][2] if self.points else 0.0

    @property
    def last_green_s(self) -> float | None:
        """Duration of the latest passing record."""
        return next((duration for _, status, duration in reversed(self.points) if status == "pass"), None)


@dataclass
class History:
    path: Path
    records: int = 0
    runs: list[Run] = field(default_factory=list)
    tests: dict[str, TestHistory] = field(default_factory=dict)

    @property
    def last_run(self) -> Run | None:
        return self.runs[-1] if self.runs else None

    def failing(self) -> list[TestHistory]:
        return [t for t in self.tests.values() if t.status == "fail"]

    def flaky(self) -> list[TestHistory]:
        return [t for t in self.tests.values() if t.flaky]

    def slowest(self, count: int = 10) -> list[TestHistory]:
        ran = [t for t in self.tests.values() if t.status in ("pass", "fail")]
        return sorted(ran, key=lambda t: t.duration_s, reverse=True)[:count]

    @property
    def saved_s(self) -> float:
        """Time green skips saved, pipeline by pipeline (`history.pipelines`: shards are not skips of each other)."""
        from open_agent_compiler.history.pipelines import saved_total  # a seam: pipelines reads this module

        return saved_total(self)


class LineSource(Protocol):
    """The log's bytes, or anything that gives `source[start:end]` for the start and end of a line of it."""

    def __getitem__(self, where: slice, /) -> bytes: ...


class HistoryFold:
    """`build_history`'s one pass over the scanned records as a state that can stop after any record and go on
    later: the history index (`history_index`) keeps it for the log up to a byte offset and feeds it only the
    records past it. Fed records in log order; `history` finishes a copy, so the same records fed in one piece or
    in several give the same History, float for float.

    Kept lean on purpose (locals in the loop, one dict lookup per record, no line copied or decoded here): 50,000
    lines in a fraction of a second."""

    __slots__ = ("runs", "run_of", "green", "finished", "tests", "current_id", "ran_s", "last_stamp", "_seen")

    def __init__(self) -> None:
        self.runs: list[Run] = []
        self.run_of: dict[bytes, Run] = {}  # raw run id -> its run
        self.green: dict[bytes, float] = {}  # test id -> last green duration, as of the record being read
        self.finished: dict[bytes, bytes] = {}  # run id -> timestamp of its latest record, once left
        # test id -> [points, their keys, start and end of its latest line, of its latest failing line, failing keys]
        self.tests: dict[bytes, list[Any]] = {}
        self.current_id: bytes | None = None  # the run of the latest record; its `ran_s` not yet added to it
        self.ran_s = 0.0
        self.last_stamp = b""
        self._seen: dict[bytes, set[bytes]] | None = {}  # run id -> tests it recorded (None: derive from points)

    def _seen_by_run(self) -> dict[bytes, set[bytes]]:
        if self._seen is None:  # restored: every point is one record of its test in the run of its index
            ids = [run_id for run_id in self.run_of]
            seen: dict[bytes, set[bytes]] = {run_id: set() for run_id in ids}
            for test_id, test in self.tests.items():
                for index in {point[0] for point in test[0]}:
                    seen[ids[index]].add(test_id)
            self._seen = seen
        return self._seen

    def feed(self, records: Iterable[Scanned]) -> None:
        runs, run_of, green, finished, state = self.runs, self.run_of, self.green, self.finished, self.tests
        seen_by_run = self._seen_by_run()
        current_id, ran_s, previous_stamp = self.current_id, self.ran_s, self.last_stamp
        run = Run(run_id="", index=-1) if current_id is None else run_of[current_id]
        seen_in_run = set() if current_id is None else seen_by_run[current_id]
        counts, index = run.counts, run.index

        for stamp, run_id, test_id, status, duration, key, start, end in records:
            if run_id != current_id:  # runs interleaved in the log (parallel `oac test`s) are counted where they are
                if current_id is not None:
                    run.duration_s += ran_s
                    finished[current_id] = previous_stamp
                ran_s = 0.0
                known = run_of.get(run_id)
                if known is None:
                    seen_by_run[run_id] = set()
                    known = run_of[run_id] = Run(run_id=_text(run_id), index=len(runs), started=_text(stamp),
                                                 first=(start, end))
                    # every test green when the run starts counts as skipped until the run records it
                    known.skipped_green, known.saved_s = len(green), sum(green.values())
                    runs.append(known)
                run, current_id, seen_in_run, counts = known, run_id, seen_by_run[run_id], known.counts
                index = run.index
            previous_stamp = stamp
            if test_id not in seen_in_run:
                seen_in_run.add(test_id)
                was_green = green.get(test_id)
                if was_green is not None:
                    run.skipped_green -= 1
                    run.saved_s -= was_green
            counts[status] += 1
            ran_s += duration
            test = state.get(test_id)
            if test is None:
                test = state[test_id] = [[], [], 0, 0, -1, -1, []]
            test[0].append((index, status, duration))
            test[1].append(key)
            test[2] = start
            test[3] = end
            if status == "pass":
                green[test_id] = duration
            else:
                green.pop(test_id, None)
                if status == "fail":
                    test[4] = start
                    test[5] = end
                    test[6].append(key)
        self.current_id, self.ran_s, self.last_stamp = current_id, ran_s, previous_stamp

    def history(self, path: Path, data: "LineSource") -> History:
        """The History of the records fed so far, `data` the log they were read from (its bytes, or what gives
        the lines asked for). Its tests share this fold's point lists: feed no more after."""
        history = History(path=path)
        finished = dict(self.finished)
        for run in self.runs:
            done = Run(run_id=run.run_id, index=run.index, started=run.started, counts=dict(run.counts),
                       duration_s=run.duration_s, skipped_green=run.skipped_green, saved_s=run.saved_s,
                       first=run.first)
            first = _decoded(data[run.first[0]:run.first[1]]) if run.first[1] else {}
            done.pipeline, done.shard, done.commit = (
                value if isinstance(value := first.get(name), str) else None for name in ("pipeline", "shard", "commit"))
            history.runs.append(done)
        if self.current_id is not None:
            current = history.runs[self.run_of[self.current_id].index]
            current.duration_s += self.ran_s
            finished[self.current_id] = self.last_stamp
        for each in history.runs:
            each.saved_s = max(0.0, each.saved_s)  # float rounding of the subtractions
        for run_id, last_stamp in finished.items():
            history.runs[self.run_of[run_id].index].finished = _text(last_stamp)
        tests = history.tests
        history.records = sum(len(test[0]) for test in self.tests.values())
        for test_id, (points, keys, start, end, fail_start, fail_end, fail_keys) in self.tests.items():
            last_raw = data[start:end]
            text = _text(test_id)
            tests[text] = TestHistory(
                test_id=text, points=points, point_keys=keys, fail_keys=fail_keys, last_raw=last_raw,
                failure_raw=None if fail_start < 0 else last_raw if fail_start == start else data[fail_start:fail_end])
        return history

    def dump(self) -> tuple[Any, ...]:
        """The state as plain values (bytes, str, numbers, tuples, lists, dicts: what `marshal` stores)."""
        runs = [(run_id, run.started, tuple(run.counts.values()), run.duration_s, run.skipped_green, run.saved_s,
                 run.first) for run_id, run in self.run_of.items()]
        return (runs, self.green, self.finished, self.tests, self.current_id, self.ran_s, self.last_stamp)

    @classmethod
    def restore(cls, state: tuple[Any, ...]) -> "HistoryFold":
        """The fold `dump` gave `state`; its lists are taken, not copied."""
        runs, green, finished, tests, current_id, ran_s, last_stamp = state
        fold = cls()
        for index, (run_id, started, counts, duration_s, skipped_green, saved_s, first) in enumerate(runs):
            run = Run(run_id=_text(run_id), index=index, started=started, counts=dict(zip(STATUSES, counts)),
                      duration_s=duration_s, skipped_green=skipped_green, saved_s=saved_s, first=tuple(first))
            fold.runs.append(run)
            fold.run_of[run_id] = run
        fold.green, fold.finished, fold.tests = green, finished, tests
        fold.current_id, fold.ran_s, fold.last_stamp = current_id, ran_s, last_stamp
        fold._seen = None
        return fold


def build_history(path: Path, data: bytes, records: Iterable[Scanned], since: datetime | None = None) -> History:
    """The History of the scanned records of `data` in log order (see `history_scan.scan`), those from `since` on
    when given."""
    if since is not None:
        records = (r for r in records if (moment := _moment(r[0].decode("utf-8", "replace"))) and moment >= since)
    fold = HistoryFold()
    fold.feed(records)
    return fold.history(path, data)


def _text(raw: bytes) -> str:
    return raw.decode("utf-8", "surrogatepass")


def _decoded(raw: bytes) -> dict[str, Any]:
    """The scanner read this line's summary fields; a line torn inside its evidence that still ends in `}` reads
    as no more than those (never a traceback)."""
    try:
        value = json.loads(raw)
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def load_history(path: Path, since: datetime | None = None, warn: Callable[[str], None] | None = None) -> History:
    """The history of `path`; a corrupt line (a crashed writer's torn line) is skipped with a warning naming
    file:line, as every reader of the log does."""
    if not path.exists():
        raise OacError(f"no results file at {path}: run `oac test` first, or pass --results")
    data = read_log(path)
    return build_history(path, data, scan(data, path, warn), since)


def summary(history: History, top: int = 10) -> dict[str, Any]:
    """The `oac results --format json` document (also what the text form prints)."""
    last = history.last_run

    def test_row(test: TestHistory) -> dict[str, Any]:
        return {"test_id": test.test_id, "name": test.name, "kind": test.kind, "status": test.status,
                "duration_s": round(test.duration_s, 6), "invoker": test.invoker}

    return {
        "results": str(history.path),
        "records": history.records,
        "runs": len(history.runs),
        "last_run": last.as_dict() if last else None,
        "failing": [{**test_row(t), "evidence": first_failure(t.last.get("evidence")),
                     "timestamp": t.last.get("timestamp")} for t in history.failing()],
        "flaky": [{**test_row(t), "keys": sorted(k for k, seen in t.keys.items() if {"pass", "fail"} <= seen)}
                  for t in history.flaky()],
        "slowest": [test_row(t) for t in history.slowest(top)],
        "saved_s": round(history.saved_s, 3),
    }
