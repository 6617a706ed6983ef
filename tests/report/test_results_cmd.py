"""`oac results`: the summary of a JSONL history, as text and as JSON."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from history_data import failing_evidence, record, write

OAC = str(Path(sys.executable).with_name("oac"))


def oac(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([OAC, *args], cwd=cwd, capture_output=True, text=True, timeout=60,
                          env={**os.environ, "NO_COLOR": "1"})


@pytest.fixture
def history(tmp_path: Path) -> Path:
    """Three runs: `a` green throughout (ran in run 0 only: skipped green after), `b` fails last, `c` flaky under
    one key, `slow` the slowest, an agent test with two turns."""
    records = [
        record(0, "x:tool:a", "pass", 2.5), record(0, "x:tool:b", "pass", 0.5, key="kb0"),
        record(0, "x:tool:c", "pass", 0.1, key="kc"), record(0, "x:tool:slow", "pass", 9.0),
        record(1, "x:tool:b", "pass", 0.5, key="kb1"), record(1, "x:tool:c", "fail", 0.1, key="kc",
                                                              evidence=failing_evidence("flake")),
        record(2, "x:tool:b", "fail", 0.4, key="kb2", evidence=failing_evidence("expected 'ABC', got 'abc'")),
        record(2, "x:tool:c", "pass", 0.1, key="kc"),
        record(2, "x:agent:chat", "pass", 1.0, kind="agent", invoker="scripted", turns=[["lint"], ["post", "ask"]]),
    ]
    return write(tmp_path / ".oac" / "test_results.jsonl", records)


def test_json_summary_counts_failing_flaky_slowest_and_saved(history: Path) -> None:
    done = oac(history.parent.parent, "results", "--format", "json")
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["records"] == 9 and data["runs"] == 3
    last = data["last_run"]
    assert last["run_id"] == "run0002"
    assert last["counts"] == {"pass": 2, "fail": 1, "skipped": 0, "not_runnable": 0}
    assert last["skipped_green"] == 2  # a and slow: green before run 2, not recorded in it
    assert last["saved_s"] == pytest.approx(11.5)
    # run 1 skipped a (2.5), c was green and ran, slow (9.0); run 2 skipped a and slow again
    assert data["saved_s"] == pytest.approx(11.5 + 11.5)
    assert [(f["test_id"], f["evidence"]) for f in data["failing"]] == [("x:tool:b", "answer: expected 'ABC', got 'abc'")]
    assert [f["test_id"] for f in data["flaky"]] == ["x:tool:c"]  # b failed under a new key: not flaky
    assert [s["test_id"] for s in data["slowest"]][:3] == ["x:tool:slow", "x:tool:a", "x:agent:chat"]


def test_text_summary_names_the_failure_and_the_flaky_test(history: Path) -> None:
    done = oac(history.parent.parent, "results")
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "last run run0002" in out and "pass=2 fail=1" in out
    assert "x:tool:b" in out and "expected 'ABC', got 'abc'" in out
    assert "flaky, passed and failed under one key (1):\n  - x:tool:c: .F." in out
    assert "time saved by skipping green tests: 23.00 s over 3 runs" in out


def test_since_keeps_only_later_records(history: Path) -> None:
    done = oac(history.parent.parent, "results", "--format", "json", "--since", "2026-11-03")
    data = json.loads(done.stdout)
    assert data["records"] == 3 and data["runs"] == 1 and data["flaky"] == []


def test_bad_since_is_one_line_exit_2(history: Path) -> None:
    done = oac(history.parent.parent, "results", "--since", "last tuesday")
    assert done.returncode == 2
    assert done.stderr.strip().count("\n") == 0 and "--since 'last tuesday'" in done.stderr
    assert "Traceback" not in done.stderr


def test_corrupt_line_is_skipped_with_a_warning_naming_file_and_line(history: Path) -> None:
    lines = history.read_text().splitlines()
    lines.insert(3, '{"timestamp": "2026-11-01T09:00:00+00:00", "run_id": "run0000", "test_id')  # a torn line
    history.write_text("\n".join(lines) + "\n")
    done = oac(history.parent.parent, "results", "--format", "json")
    assert done.returncode == 0
    assert done.stderr.strip() == f"oac: warning: {history}:4: skipping a corrupt line"
    assert json.loads(done.stdout)["records"] == 9


def test_missing_history_is_one_line_exit_2(tmp_path: Path) -> None:
    done = oac(tmp_path, "results")
    assert done.returncode == 2 and "no results file at" in done.stderr and "Traceback" not in done.stderr


def test_results_table_of_pyproject_is_used(history: Path, tmp_path: Path) -> None:
    moved = tmp_path / "logs" / "h.jsonl"
    moved.parent.mkdir()
    history.rename(moved)
    (tmp_path / "pyproject.toml").write_text('[tool.oac]\nresults = "logs/h.jsonl"\n')
    (tmp_path / "sub").mkdir()
    done = oac(tmp_path / "sub", "results", "--format", "json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["records"] == 9


def test_an_empty_period_says_so(history: Path) -> None:
    done = oac(history.parent.parent, "results", "--since", "2030-01-01")
    assert done.returncode == 0
    assert done.stdout.splitlines()[-1] == "no test records since 2030-01-01"
