"""A test's JSONL record: built from its outcome and appended by the process that ran it, before the test's green
state can be saved (doit saves it after the action returns), so a pass never exists without its record."""

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic_core import PydanticSerializationError

from open_agent_compiler.errors import OacError
from open_agent_compiler.testing.results import ResultsLog, TestOutcome, TestRecord

if TYPE_CHECKING:
    from open_agent_compiler.tasks.graph import TestPlan

_LOGS: dict[tuple[int, str], ResultsLog] = {}  # (pid, path) → log: a forked worker opens its own descriptor


def _log(path: Path) -> ResultsLog:
    key = (os.getpid(), str(path))
    log = _LOGS.get(key)
    if log is None:
        log = _LOGS[key] = ResultsLog(path)
    return log


def close_logs() -> None:
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
                 repeats: dict[str, Any] | None = None, flaky: bool | None = None) -> TestRecord:
    case = plan.by_id[test_id]
    parts = plan.parts_of(test_id)
    return TestRecord.model_construct(  # built from our own typed values: no re-validation per test
        timestamp=finished, run_id=plan.run_id, test_id=test_id, test_kind=case.kind, test_name=case.name,
        target_name=case.target_name, status=outcome.status, passed=outcome.status == "pass", score=outcome.score,
        duration_s=round(outcome.duration_s, 6), variant=plan.options.variant,
        access_profile=case.test.access_profile, mock_profile=case.mock_profile, model=plan.model_name(case),
        dialect=plan.options.dialect if case.kind != "tool" else None, config=plan.options.config,
        agent_state_hash=parts.target, mock_set_hash=parts.mocks, composite_hash=plan.keys[test_id],
        evidence=[r.model_dump(mode="json") for r in outcome.evidence], skip_reason=outcome.skip_reason,
        invoker=parts.invoker, turns=[list(calls) for calls in outcome.turns] if case.kind == "agent" else None,
        repeat=repeat, repeats=repeats, flaky=flaky,
    )


class ResultsLogLost(SystemExit):
    """The results log cannot take a record: the run ends at once (the test whose record is missing is not
    saved green), with one line and exit 2. A SystemExit, so doit lets it through its action wrapper and its
    `-n` workers hand it to the main process; `tasks.run` turns it into that line."""


def append_record(plan: "TestPlan", record: TestRecord) -> None:
    log = _log(plan.results_path)
    try:
        log.append(record)
    except PydanticSerializationError:  # e.g. a lone surrogate in a handler's output: keep it, escaped
        log.append(TestRecord.model_construct(**_escaped(dict(record))))
