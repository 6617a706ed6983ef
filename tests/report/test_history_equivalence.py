"""The history views read the log the fast way (a regex over the file, lines decoded only when shown). These tests
hold that reading to the meaning of the records: the fast path and the json path give the same History, and both
give what the fully validated records (`TestRecord`) say by the definitions of `history.views`."""

import json
import os
import subprocess
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest

from open_agent_compiler.history.views import STATUSES, History, load_history, summary
from open_agent_compiler.history.scan import _SLIM
from open_agent_compiler.history.log import TestRecord

KINDS = ("tool", "capability", "agent")
ODD_TEXT = 'quote " back\\slash, newline\n, tab\t, é ✓ and </script>'


def _record(run: int, index: int, test: str, status: str, duration: float, **extra: Any) -> TestRecord:
    kind = extra.pop("kind", KINDS[index % 3])
    evidence = [{"evaluator_kind": "equals", "name": "answer", "passed": status == "pass", "score": 1.0,
                 "skipped": status == "skipped", "evidence": f"run {run}: {ODD_TEXT if index % 5 == 0 else 'ok'}"}]
    values: dict[str, Any] = {
        "timestamp": f"2026-11-{run + 1:02d}T09:{index % 60:02d}:00.000+00:00", "run_id": f"run-{run}",
        "test_id": test, "test_kind": kind, "test_name": test.rpartition(":")[2], "target_name": test.partition(":")[0],
        "status": status, "passed": status == "pass", "score": 1.0 if status == "pass" else 0.0,
        "duration_s": duration, "variant": None, "access_profile": None, "mock_profile": None, "model": None,
        "dialect": "opencode", "config": "prod", "agent_state_hash": "a" * 16, "mock_set_hash": None,
        "composite_hash": f"{test}-k{run}", "evidence": evidence,
        "skip_reason": "needs a model" if status == "not_runnable" else None,
        "invoker": "scripted" if kind == "agent" else None,
        "turns": [["lint"], ["post", "ask"]] if kind == "agent" else None}
    values.update(extra)
    return TestRecord.model_validate(values)  # full validation: every record is one `oac test` could write


def _records(interleaved: bool) -> list[TestRecord]:
    """Six runs over twelve tests: every status and kind, a flaky test (pass and fail under one key), a repeat
    series with its summary record, names and evidence with quotes, backslashes, newlines and non-ASCII, tests
    left out of runs (skipped green), a test flaky under an older key. `interleaved`: runs 2 and 3 write their
    records alternately."""
    tests = [f"agent{n % 3}:{KINDS[n % 3]}:t{n}" for n in range(10)] + ['odd:tool:"quoted"\\name', "é:tool:ünï"]
    out: list[TestRecord] = []
    for run in range(6):
        for index, test in enumerate(tests):
            if run and index % (run + 1) == 1:
                continue  # not re-run: skipped green when it last passed
            status = STATUSES[(run + index) % 4] if index % 3 == 0 else "fail" if (run * index) % 7 == 3 else "pass"
            out.append(_record(run, index, test, status, round(0.05 * (index + 1) + 0.001 * run, 6)))
        out.append(_record(run, 20, "flaky:tool:f", "fail" if run % 2 else "pass", 0.3, composite_hash="one-key"))
        if run < 3:  # flaky under its first key (pass, fail), then failing under a new one
            out.append(_record(run, 21, "flaky:tool:g", ("pass", "fail", "fail")[run], 0.1,
                               composite_hash="g1" if run < 2 else "g2"))
    for repeat in (1, 2, 3):
        out.append(_record(6, 30 + repeat, "rep:tool:r", "fail" if repeat == 2 else "pass", 0.2, repeat=repeat))
    out.append(_record(6, 34, "rep:tool:r", "pass", 0.6, flaky=True,
                       repeats={"runs": 3, "passes": 2, "pass_rate": 0.667, "pass_at_k": 1.0, "pass_hat_k": 0.296}))
    if interleaved:
        two = [r for r in out if r.run_id == "run-2"]
        three = [r for r in out if r.run_id == "run-3"]
        mixed = [r for pair in zip(two, three) for r in pair] + two[len(three):] + three[len(two):]
        first = out.index(two[0])
        rest = [r for r in out if r.run_id not in ("run-2", "run-3")]
        out = rest[:first] + mixed + rest[first:]
    return out


def _write(path: Path, records: list[TestRecord], fast: bool) -> Path:
    """Our writer's compact form (the regex path), or json.dumps with spaces (every line through json); a torn line
    and a foreign JSON value in the middle either way."""
    lines = [r.model_dump_json() if fast else json.dumps(r.model_dump()) for r in records]
    lines[5:5] = ['{"timestamp": "2026-11-01T09:00:00+00:00", "run_id": "run-0", "test_id', "[1, 2]", ""]
    path.write_text("\n".join(lines) + "\n")
    return path


def _snapshot(history: History) -> dict[str, Any]:
    document = summary(history, top=50)
    document.pop("results")
    return {
        "summary": document,
        "runs": [(run.as_dict(), run.index, run.duration_s, run.saved_s) for run in history.runs],
        "tests": {test_id: (t.name, t.kind, t.target, t.invoker, t.status, t.flaky, t.keys, t.points, t.last,
                            t.last_failure, t.last_green_s, t.duration_s) for test_id, t in history.tests.items()},
    }


@pytest.mark.parametrize("interleaved", [False, True])
def test_fast_path_and_json_path_give_the_same_history(tmp_path: Path, interleaved: bool) -> None:
    records = _records(interleaved)
    fast = _write(tmp_path / "fast.jsonl", records, fast=True)
    slow = _write(tmp_path / "slow.jsonl", records, fast=False)
    matched = sum(1 for line in fast.read_bytes().splitlines() if _SLIM.match(line))
    assert matched >= len(records) * 3 // 4  # most lines took the regex path (else this compares json to json)
    assert not any(_SLIM.match(line) for line in slow.read_bytes().splitlines())
    warnings: list[str] = []
    fast_history = load_history(fast, warn=warnings.append)
    slow_history = load_history(slow, warn=warnings.append)
    assert warnings == [f"oac: warning: {path}:{line}: skipping {what}" for path in (fast, slow)
                        for line, what in ((6, "a corrupt line"), (7, "a line that is not a JSON object"))]
    assert _snapshot(fast_history) == _snapshot(slow_history)


def test_history_says_what_the_validated_records_say(tmp_path: Path) -> None:
    """A naive reading of the validated records, by the module's definitions, against the fast reader."""
    records = _records(interleaved=False)
    history = load_history(_write(tmp_path / "h.jsonl", records, fast=True), warn=lambda _: None)

    runs: dict[str, dict[str, Any]] = {}
    green: dict[str, float] = {}
    by_test: dict[str, list[TestRecord]] = defaultdict(list)
    for record in records:
        if record.run_id not in runs:
            ran = {r.test_id for r in records if r.run_id == record.run_id}
            skipped = {test: duration for test, duration in green.items() if test not in ran}
            runs[record.run_id] = {"run_id": record.run_id, "started": record.timestamp,
                                   "counts": dict.fromkeys(STATUSES, 0), "ran_s": 0.0,
                                   "skipped_green": len(skipped), "saved_s": sum(skipped.values())}
        run = runs[record.run_id]
        run["counts"][record.status] += 1
        run["ran_s"] += record.duration_s
        run["finished"] = record.timestamp
        by_test[record.test_id].append(record)
        if record.status == "pass":
            green[record.test_id] = record.duration_s
        else:
            green.pop(record.test_id, None)

    assert history.records == len(records)
    got = [run.as_dict() for run in history.runs]
    assert [r["run_id"] for r in got] == list(runs)
    for mine, want in zip(got, runs.values()):
        assert mine == {**want, "ran_s": round(want["ran_s"], 3), "saved_s": round(want["saved_s"], 3)}
    assert set(history.tests) == set(by_test)
    index = {run_id: number for number, run_id in enumerate(runs)}
    for test_id, seen in by_test.items():
        test, last = history.tests[test_id], seen[-1]
        failures = [r for r in seen if r.status == "fail"]
        passes = [r for r in seen if r.status == "pass"]
        assert test.points == [(index[r.run_id], r.status, r.duration_s) for r in seen]
        assert test.last == last.model_dump()
        assert test.last_failure == (failures[-1].model_dump() if failures else None)
        assert (test.name, test.kind, test.target, test.invoker) == (last.test_name, last.test_kind,
                                                                     last.target_name, last.invoker)
        assert (test.status, test.duration_s) == (last.status, last.duration_s)
        assert test.last_green_s == (passes[-1].duration_s if passes else None)
        flaky = any({"pass", "fail"} <= {r.status for r in seen if r.composite_hash == key}
                    for key in {r.composite_hash for r in seen})
        assert test.flaky == flaky, test_id
    assert {t.test_id for t in history.flaky()} == {"flaky:tool:f", "flaky:tool:g", "rep:tool:r"}  # repeats: one key
    assert {t.test_id for t in history.failing()} == {t for t, seen in by_test.items() if seen[-1].status == "fail"}
    assert set(STATUSES) <= {r.status for r in records} and {r.test_kind for r in records} == set(KINDS)


def test_a_line_torn_inside_its_evidence_is_skipped_or_read_without_a_traceback(tmp_path: Path) -> None:
    """A crashed writer's line cut after `"evidence":` has every field the regex looks for: it must still go the
    json way (skipped with a warning), and one cut right after a `}` (taken) must not break the view."""
    records = [_record(0, 0, "x:tool:a", "pass", 0.1), _record(0, 1, "x:tool:b", "fail", 0.2)]
    whole = [r.model_dump_json() for r in records]
    cut = whole[1].index('"evidence":') + 30
    torn = whole[1][:cut]
    after_brace = whole[1][: whole[1].index("}]") + 1]
    path = tmp_path / "h.jsonl"
    path.write_text(f"{whole[0]}\n{torn}\n")
    warnings: list[str] = []
    history = load_history(path, warn=warnings.append)
    assert warnings == [f"oac: warning: {path}:2: skipping a corrupt line"]
    assert list(history.tests) == ["x:tool:a"] and history.records == 1
    path.write_text(f"{whole[0]}\n{after_brace}\n")
    history = load_history(path, warn=warnings.append)
    test = history.tests["x:tool:b"]
    assert (test.status, test.name, test.last, test.last_failure) == ("fail", "x:tool:b", {}, {})
    assert summary(history)["failing"][0]["evidence"] == ""


def test_oac_show_finds_what_the_validated_records_say(tmp_path: Path) -> None:
    """`oac show` scans the log the same way and decodes only the asked test's lines: its answer is the last
    validated record of that test and config that is not one of a repeat series, whichever path its line took."""
    records = _records(interleaved=False) + [_record(6, 40, "agent1:capability:t1", "pass", 0.4, config="staging"),
                                             _record(6, 41, "agent2:agent:t2", "fail", 0.1, repeat=1)]
    path = _write(tmp_path / "h.jsonl", records, fast=True)
    torn = records[-2].model_dump_json()
    path.write_text(path.read_text() + torn[: torn.index("}]") + 1] + "\n")  # that test's line, torn: not its last
    oac = str(Path(sys.executable).with_name("oac"))

    def show(test_id: str, *extra: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([oac, "show", test_id, "--results", str(path), "--format", "json", *extra],
                              cwd=tmp_path, capture_output=True, text=True, timeout=60, env={**os.environ})

    lines = len(path.read_text().splitlines())
    for test_id, config in (("agent1:capability:t1", None), ("agent1:capability:t1", "prod"),
                            ('odd:tool:"quoted"\\name', None), ("é:tool:ünï", None), ("rep:tool:r", None),
                            ("agent2:agent:t2", None)):
        done = show(test_id, *(("--config", config) if config else ()))
        assert done.returncode == 0, done.stderr
        want = [r for r in records if r.test_id == test_id and config in (None, r.config) and not r.repeat][-1]
        assert json.loads(done.stdout)["record"] == want.model_dump(), test_id
        assert done.stderr.splitlines() == [f"oac: warning: {path}:6: skipping a corrupt line",
                                            f"oac: warning: {path}:7: skipping a line that is not a JSON object"] + (
            [f"oac: warning: {path}:{lines}: skipping a corrupt line"] if test_id == "agent1:capability:t1" else [])
    missing = show("agent1:capability:t11")
    assert missing.returncode == 2 and "Traceback" not in missing.stderr
    assert missing.stderr.splitlines()[-1].startswith("oac: no record of test 'agent1:capability:t11' in ")
    assert "did you mean 'agent1:capability:t1'" in missing.stderr
