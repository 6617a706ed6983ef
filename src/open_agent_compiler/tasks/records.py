"""A test's JSONL record: built from its outcome and appended by the process that ran it, before the test's green
state can be saved (doit saves it after the action returns), so a pass never exists without its record.

In the process whose doit backend is ours (`tasks.backend`), a record is serialised once and kept in a batch that
is written with one locked `write`: when the batch is full, and by the backend before it commits any row
(`write_pending`), so a green row is never committed before its record is written. Under `oac test -n` a worker
only runs the test: the main process builds and batches its record (`LeanTestTask.conclude`). Elsewhere (a dodo.py
on another backend, doit's own process runner) each record is written at once."""

import contextlib
import os
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic_core import PydanticSerializationError

from open_agent_compiler.errors import OacError, ResultsError
from open_agent_compiler.tasks import backend
from open_agent_compiler.tasks.pipeline import defined_in, run_stamp
from open_agent_compiler.history.log import ResultsLog, TestOutcome, TestRecord
from open_agent_compiler.keys.record_hash import composite_hash

if TYPE_CHECKING:
    from open_agent_compiler.tasks.graph import TestPlan

_LOGS: dict[tuple[int, str], ResultsLog] = {}  # (pid, path) → log: a forked worker opens its own descriptor
BATCH_LINES = 500  # a batch is written when it holds this many records (and at every backend flush)
_PENDING: dict[tuple[int, str], list[bytes]] = {}  # (pid, path) → serialised records not written yet
_PENDING_LOCK = threading.Lock()  # doit's thread adds, the backend's flush timer writes; also keeps their order
_lost: list[str] = []  # the error that lost a batch: no later record is accepted, no later row committed


def _log(path: Path) -> ResultsLog:
    key = (os.getpid(), str(path))
    log = _LOGS.get(key)
    if log is None:
        log = _LOGS[key] = ResultsLog(path)
    return log


def start_batches() -> None:
    """A backend of ours opened in this process: a new run, no batch lost yet."""
    with _PENDING_LOCK:
        _lost.clear()


def write_pending() -> None:
    """Write every batched record of this process (the backend calls this before it commits rows). Raises
    ResultsError once a batch could not be written, then and on every later call."""
    with _PENDING_LOCK:
        if _lost:
            raise ResultsError(_lost[0])
        pid = os.getpid()
        for key in [key for key in _PENDING if key[0] == pid]:
            lines = _PENDING.pop(key)
            try:
                _log(Path(key[1])).write_lines(lines)
            except ResultsError as exc:
                _lost.append(str(exc))
                raise


def close_logs() -> None:
    try:
        write_pending()
    except ResultsError as exc:  # (the backend's flush at the end of the run met it first)
        raise ResultsLogLost(str(exc)) from None
    finally:
        for log in _LOGS.values():
            log.close()
        _LOGS.clear()


def _escaped(value: Any) -> Any:
    """`value` with lone surrogates (which JSON/UTF-8 cannot hold) written as `\\udxxx` escapes."""
    if isinstance(value, str):
        return value.encode("utf-8", "backslashreplace").decode("utf-8")
    if isinstance(value, dict):
        return {_escaped(k): _escaped(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_escaped(v) for v in value]
    return value


def build_record(plan: "TestPlan", test_id: str, outcome: TestOutcome, finished: str, *, repeat: int | None = None,
                 repeats: dict[str, Any] | None = None, flaky: bool | None = None,
                 parts: dict[str, Any] | None = None) -> TestRecord:
    """`parts`: the test's key parts as saved (`plan.keyer.view_of(test_id)`), when the caller has them."""
    case = plan.by_id[test_id]
    parts = parts or plan.keyer.view_of(test_id)
    pipeline, shard, commit = run_stamp(plan)
    file, line = defined_in(case.test, plan.root)
    return TestRecord.of_fields(dict(  # built from our own typed values: no re-validation per test
        timestamp=finished, run_id=plan.run_id, test_id=test_id, test_kind=case.kind, test_name=case.name,
        target_name=case.target_name, status=outcome.status, passed=outcome.status == "pass", score=outcome.score,
        duration_s=round(outcome.duration_s, 6), variant=plan.options.variant,
        access_profile=case.test.access_profile, mock_profile=case.mock_profile, model=plan.model_name(case),
        dialect=plan.options.dialect if case.kind != "tool" else None, config=plan.options.config,
        agent_state_hash=parts["target"], mock_set_hash=parts["mocks"], composite_hash=composite_hash(plan.keys[test_id]),
        evidence=[r.model_dump(mode="json") for r in outcome.evidence], skip_reason=outcome.skip_reason,
        invoker=parts["invoker"], turns=[list(calls) for calls in outcome.turns] if case.kind == "agent" else None,
        repeat=repeat, repeats=repeats, flaky=flaky, file=file, line=line, pipeline=pipeline, shard=shard,
        commit=commit,
    ))


class ResultsLogLost(SystemExit):
    """The results log cannot take a record: the run ends at once (the test whose record is missing is not
    saved green), with one line and exit 2. A SystemExit, so doit lets it through its action wrapper and its
    `-n` workers hand it to the main process; `tasks.run` turns it into that line."""


def write_records_now() -> None:
    """Write the batch before user code runs in this process (`execution.watchdog`): an engine that user code ends
    or that is killed at a deadline loses no record already earned. A lost batch is told by the run itself."""
    if _PENDING:
        with contextlib.suppress(ResultsError):
            write_pending()


def append_record(plan: "TestPlan", record: TestRecord) -> None:
    """Serialise `record` once and append it: batched where our backend writes the batch before any commit, at
    once elsewhere. Raises ResultsError when it (or an earlier batch) cannot be written."""
    try:
        line = (record.model_dump_json() + "\n").encode()
    except PydanticSerializationError:  # e.g. a lone surrogate in a handler's output: keep it, escaped
        line = (TestRecord.model_construct(**_escaped(dict(record))).model_dump_json() + "\n").encode()
    if not backend.batches_records():
        _log(plan.results_path).write_lines([line])
        return
    key = (os.getpid(), str(plan.results_path))
    with _PENDING_LOCK:
        if _lost:
            raise ResultsError(_lost[0])
        pending = _PENDING.setdefault(key, [])
        pending.append(line)
        full = len(pending) >= BATCH_LINES
    if full:
        write_pending()
