"""The history by CI pipeline (`history.pipelines`): shards totalled as one, failures listed, time saved only from
green skips at the skipped test's last measured duration."""

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from history_data import failing_evidence, record, write

from open_agent_compiler.history.pipelines import last_pipeline, pipelines
from open_agent_compiler.history.views import load_history

OAC = str(Path(sys.executable).with_name("oac"))
TESTS = [f"x:tool:t{n}" for n in range(9)]


def shard_record(run: int, shard: int, test: str, status: str, duration: float, pipeline: str,
                 minutes: int, **extra: Any) -> dict[str, Any]:
    """A record of shard `shard`/3 of `pipeline`; run ids differ per shard, as each checkout's `oac test` makes."""
    found = record(run, test, status, duration, minutes=minutes, **extra)
    found.update(run_id=f"run{run:04d}s{shard}", pipeline=pipeline, shard=f"{shard}/3", commit="c" * 40,
                 file="agents.py", line=10 + TESTS.index(test))
    if status == "skipped":
        found["skip_reason"] = "green: key unchanged since an earlier run"
    return found


def sharded(run: int, pipeline: str, status_of: dict[str, tuple[str, float]]) -> list[dict[str, Any]]:
    """The shards' records interleaved in time, as a merged log holds them: test n in shard n % 3 + 1."""
    return [shard_record(run, n % 3 + 1, test, *status_of[test], pipeline=pipeline, minutes=n,
                         **({"evidence": failing_evidence("boom")} if status_of[test][0] == "fail" else {}))
            for n, test in enumerate(TESTS)]


def cold_then_warm(tmp_path: Path) -> Path:
    cold = {test: ("pass", 1.0 + n) for n, test in enumerate(TESTS)}
    cold[TESTS[4]] = ("fail", 0.5)
    warm = {test: ("skipped", 0.0) for test in TESTS}
    warm[TESTS[4]] = ("fail", 0.5)  # failed last time: runs again, fails again
    warm[TESTS[7]] = ("pass", 3.0)  # edited: ran
    return write(tmp_path / "all.jsonl", sharded(0, "github:1.1", cold) + sharded(1, "github:2.1", warm))


def test_a_cold_sharded_pipeline_totals_its_shards_and_saves_nothing(tmp_path: Path) -> None:
    path = write(tmp_path / "cold.jsonl", sharded(0, "github:1.1", {
        test: ("fail", 0.5) if n == 4 else ("pass", 1.0 + n) for n, test in enumerate(TESTS)}))
    history = load_history(path)
    assert len(history.runs) == 3  # three shards, three runs
    [pipeline] = pipelines(history)
    assert pipeline.pipeline_id == "github:1.1" and pipeline.shards == ["1/3", "2/3", "3/3"]
    assert pipeline.counts == {"pass": 8, "fail": 1, "skipped": 0, "not_runnable": 0}
    assert [test.test_id for test in pipeline.failing] == [TESTS[4]]
    # shard 3 finished last; the tests of shards 1 and 2 were green before it: not skips, they ran elsewhere
    assert history.runs[-1].skipped_green > 0
    assert pipeline.skipped_green == 0 and pipeline.saved_s == 0.0 and history.saved_s == 0.0


def test_a_warm_pipeline_saves_the_last_passing_duration_of_each_green_skip(tmp_path: Path) -> None:
    history = load_history(cold_then_warm(tmp_path))
    first, second = pipelines(history)
    assert last_pipeline(history) is second
    assert second.counts == {"pass": 1, "fail": 1, "skipped": 7, "not_runnable": 0}
    skipped = [n for n in range(9) if n not in (4, 7)]
    assert second.skipped_green == 7
    assert abs(second.saved_s - sum(1.0 + n for n in skipped)) < 1e-9
    assert first.saved_s == 0.0 and abs(history.saved_s - second.saved_s) < 1e-9


def test_a_test_skipped_again_stays_green_at_its_last_measured_duration(tmp_path: Path) -> None:
    path = cold_then_warm(tmp_path)
    again = {test: ("skipped", 0.0) for test in TESTS}
    again[TESTS[4]] = ("fail", 0.5)
    records = [json.loads(line) for line in path.read_text().splitlines()] + sharded(2, "github:3.1", again)
    third = last_pipeline(load_history(write(path, records)))
    assert third is not None and third.skipped_green == 8
    assert abs(third.saved_s - (sum(1.0 + n for n in range(9) if n not in (4, 7)) + 3.0)) < 1e-9


def test_oac_results_puts_failures_first_and_totals_the_last_pipeline(tmp_path: Path) -> None:
    path = cold_then_warm(tmp_path)
    done = subprocess.run([OAC, "results", "--results", str(path)], capture_output=True, text=True, timeout=60,
                          env={**os.environ, "NO_COLOR": "1"})
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[1] == "failing (1):"
    assert lines[2].startswith(f"  - {TESTS[4]} (agents.py:14) [")
    assert lines[3].startswith("last pipeline github:2.1 (3 runs; shards 1/3,2/3,3/3; commit cccccccccccc;")
    assert "pass=1 fail=1 skipped=7 not_runnable=0; failed here=1; skipped green=7 (saved 32.00 s)" in lines[3]
    done = subprocess.run([OAC, "results", "--results", str(path), "--format", "json"], capture_output=True,
                          text=True, timeout=60)
    document = json.loads(done.stdout)
    assert document["last_pipeline"]["failed"] == [TESTS[4]]
    assert document["last_pipeline"]["saved_s"] == 32.0 and document["saved_s"] == 32.0
