"""A generated JSONL history: `runs` runs over `tests` tests, in the shape `oac test` writes its records."""

import json
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

START = datetime(2026, 11, 1, 9, 0, tzinfo=timezone.utc)


def record(run: int, test: str, status: str, duration: float, *, kind: str = "tool", key: str | None = None,
           evidence: list[dict[str, Any]] | None = None, name: str | None = None, invoker: str | None = None,
           turns: list[list[str]] | None = None, minutes: int = 0) -> dict[str, Any]:
    stamp = (START + timedelta(days=run, minutes=minutes)).isoformat(timespec="milliseconds")
    return {
        "timestamp": stamp, "run_id": f"run{run:04d}", "test_id": test, "test_kind": kind,
        "test_name": name or test.rpartition(":")[2], "target_name": test.partition(":")[0], "status": status,
        "passed": status == "pass", "score": 1.0 if status == "pass" else 0.0, "duration_s": duration,
        "variant": None, "access_profile": None, "mock_profile": None, "model": None, "dialect": "opencode",
        "config": "prod", "agent_state_hash": "a" * 16, "mock_set_hash": None,
        "composite_hash": key or f"{test}-k{run}", "evidence": evidence or [], "skip_reason": None,
        "invoker": invoker, "turns": turns,
    }


def failing_evidence(text: str) -> list[dict[str, Any]]:
    return [{"evaluator_kind": "equals", "name": "answer", "passed": False, "score": 0.0, "skipped": False,
             "evidence": text}]


def write(path: Path, records: list[dict[str, Any]]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def generated(path: Path, lines: int, tests: int = 5000) -> Path:
    """`lines` records: every run re-runs a tenth of the tests (edited ones), one in 29 fails, one in 97 flakes."""
    per_run = max(1, tests // 10)
    out = []
    for index in range(lines):
        run = index // per_run
        number = (run * per_run + index % per_run) % tests
        test = f"agent{number % 50}:tool:t{number}"
        status = "fail" if index % 29 == 0 else "pass"
        key = f"k{number}" if number % 97 == 0 else None  # same key in every run: flaky when it once failed
        out.append(record(run, test, status, 0.01 + (number % 13) * 0.07, key=key, minutes=index % per_run // 60,
                          evidence=failing_evidence(f"expected 'ABC', got 'abc' (run {run})") if status == "fail"
                          else None))
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w") as handle:
        for item in out:
            handle.write(json.dumps(item, separators=(",", ":")) + "\n")
    return path
