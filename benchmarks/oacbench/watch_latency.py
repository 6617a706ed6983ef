"""The `watch` scenario: `oac test --watch` on a generated 5,000-test project, side by side with a fresh `oac test`.

    python benchmarks/run.py --only watch [--reps 10]

One save = one agent's entry of `bench_spec.json` (the file its mocks and prompt come from) written whole and
renamed into place. Latency: from just before that rename to the arrival of the cycle's summary line (the line
printed after the last result of the affected tests). The same edit on a twin project is then timed as a fresh
`oac test` (a whole process: start-up, imports, registry, plan, run), and both must append the same tests with
the same statuses. Memory: the resident set of the watcher and its fork server (a cycle's child has ended by
then) after cycles 1, 10, 25, 50 and 100.
Also on the twin (1,000 agents): `oac coverage --format json` against a warm `oac test` (nothing changed),
interleaved, 3 each: coverage reads the definitions and the records and runs nothing, so it should be faster.
Targets (issue 36): median watch latency <= 0.2 s; memory after 100 cycles within 10 % of after 10; coverage
median below the warm `oac test` median.
"""

from __future__ import annotations

import json
import os
import queue
import shutil
import statistics
import subprocess
import tempfile
import threading
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any

from generate import Spec, generate
from oacbench.impls import Implementation

TESTS = 5_000
CYCLES = 100
LATENCY_TARGET_S = 0.2
GROWTH_TARGET = 1.10
READY = "oac watch: watching"
LIMIT_S = 600.0  # a hung watcher ends the scenario; never a synchronisation
ARGS = ["test", "agents:registry", "--config", "prod"]


def _save(project: Path, spec: Spec) -> float:
    """Write the spec beside the project and rename it in: one save. The moment just before the rename."""
    scratch = project.parent / f".{project.name}-bench_spec.json"
    scratch.write_text(json.dumps(asdict(spec), sort_keys=True) + "\n", encoding="utf-8")
    moment = time.perf_counter()
    os.replace(scratch, project / "bench_spec.json")
    return moment


def _rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def _children(pid: int) -> list[int]:
    try:
        return [int(p) for p in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except OSError:
        return []


def _records(project: Path, offset: int) -> tuple[int, set[tuple[str, str]]]:
    path = project / ".oac" / "test_results.jsonl"
    data = path.read_bytes() if path.exists() else b""
    return len(data), {(r["test_id"], r["status"]) for r in map(json.loads, data[offset:].splitlines())}


class _Watcher:
    def __init__(self, oac: Path, project: Path) -> None:
        self.process = subprocess.Popen([str(oac), *ARGS, "--watch"], cwd=project, stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                        start_new_session=True)
        self.lines: queue.Queue[tuple[float, str | None]] = queue.Queue()
        threading.Thread(target=self._pump, daemon=True).start()

    def _pump(self) -> None:
        for line in self.process.stdout:  # type: ignore[union-attr]
            self.lines.put((time.perf_counter(), line.rstrip("\n")))
        self.lines.put((time.perf_counter(), None))

    def cycle(self) -> tuple[float, list[str]]:
        """(arrival of the summary line, the cycle's lines) up to the next READY line."""
        seen: list[str] = []
        summary = 0.0
        while True:
            at, line = self.lines.get(timeout=LIMIT_S)
            if line is None:
                raise RuntimeError(f"oac --watch ended: {seen[-5:]}")
            seen.append(line)
            if line.startswith("oac test: "):
                summary = at
            if line.startswith(READY):
                return summary, seen


def run(ours: Implementation, reps: int = 10, tests: int = TESTS, cycles: int = CYCLES) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="oac-bench-watch-") as scratch:
        spec = Spec.for_tests(tests)
        watched = generate(Path(scratch) / "watched", spec)
        plain = Path(scratch) / "plain"
        shutil.copytree(watched, plain)
        subprocess.run([str(ours.oac), *ARGS], cwd=plain, capture_output=True, timeout=LIMIT_S)  # cold, not timed
        watcher = _Watcher(ours.oac, watched)
        watch_s: list[float] = []
        fresh_s: list[float] = []
        same = True
        rss: dict[int, int] = {}
        try:
            watcher.cycle()  # the first, cold run
            offset, _ = _records(watched, 0)
            plain_offset, _ = _records(plain, 0)
            for number in range(1, cycles + 1):
                spec = spec.with_edit(number % spec.agents, number)
                saved = _save(watched, spec)
                summary, lines = watcher.cycle()
                offset, ran = _records(watched, offset)
                if number <= reps:
                    watch_s.append(summary - saved)
                    _save(plain, spec)
                    started = time.perf_counter()
                    subprocess.run([str(ours.oac), *ARGS], cwd=plain, capture_output=True, timeout=LIMIT_S)
                    fresh_s.append(time.perf_counter() - started)
                    plain_offset, fresh_ran = _records(plain, plain_offset)
                    same = same and ran == fresh_ran and bool(ran)
                if number in (1, 10, 25, 50, 100):
                    pids = [watcher.process.pid, *_children(watcher.process.pid)]
                    rss[number] = sum(_rss_kib(pid) for pid in pids)
            watcher.process.stdin.write("q")  # type: ignore[union-attr]
            watcher.process.stdin.flush()  # type: ignore[union-attr]
            code = watcher.process.wait(LIMIT_S)
        finally:
            if watcher.process.poll() is None:
                os.killpg(watcher.process.pid, 9)
                watcher.process.wait()
        coverage = coverage_ratio(ours, plain, spec.agents)
    watch_median, fresh_median = statistics.median(watch_s), statistics.median(fresh_s)
    growth = rss[max(rss)] / rss[10] if 10 in rss else 1.0
    return {
        "scenario": "watch", "tests": tests, "cycles": cycles, "reps": reps,
        "watch_latency_s": [round(v, 4) for v in watch_s], "fresh_oac_test_s": [round(v, 4) for v in fresh_s],
        "watch_median_s": round(watch_median, 4), "fresh_median_s": round(fresh_median, 4),
        "fresh_over_watch": round(fresh_median / watch_median, 2), "same_tests_and_outcomes": same,
        "rss_kib_after_cycle": rss, "rss_growth_10_to_100": round(growth, 3), "quit_exit_code": code,
        "coverage": coverage,
        "target": {"latency_s": LATENCY_TARGET_S, "growth": GROWTH_TARGET,
                   "ok": watch_median <= LATENCY_TARGET_S and growth <= GROWTH_TARGET and same and code == 0
                   and coverage["coverage_over_warm_test"] < 1.0},
    }


def coverage_ratio(ours: Implementation, project: Path, agents: int, reps: int = 3) -> dict[str, Any]:
    """Median wall time of `oac coverage` over that of a warm `oac test` on the same project, interleaved."""
    warm: list[float] = []
    covered: list[float] = []
    listed = 0
    for _ in range(reps):
        started = time.perf_counter()
        subprocess.run([str(ours.oac), *ARGS], cwd=project, capture_output=True, timeout=LIMIT_S)
        warm.append(time.perf_counter() - started)
        started = time.perf_counter()
        done = subprocess.run([str(ours.oac), "coverage", "agents:registry", "--config", "prod", "--format", "json"],
                              cwd=project, capture_output=True, text=True, timeout=LIMIT_S)
        covered.append(time.perf_counter() - started)
        listed = len(json.loads(done.stdout)["agents"]) if done.returncode == 0 else -1
    return {"agents": agents, "agents_listed": listed, "warm_oac_test_s": round(statistics.median(warm), 4),
            "oac_coverage_s": round(statistics.median(covered), 4),
            "coverage_over_warm_test": round(statistics.median(covered) / statistics.median(warm), 3)}
