"""`oac test` benchmarks: ours vs the public open-agent-compiler==1.16.5 (the anchor), side by side, in one run.

    python benchmarks/run.py [--preset quick|default|full] [--sizes 100,1000] [--reps 5]

Also `OAC_BENCH_PRESET=full doit bench`. Prints a table, the targets of issue 4 (PASS/MISS with the numbers) and
writes benchmarks/results/<timestamp>.json, latest.json and latest.md. Work directories, the anchor's virtualenv
and raw profiles live under ~/.cache/oac-bench (OAC_BENCH_CACHE), outside the repository.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import shutil
import sys
import time
from dataclasses import asdict, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from generate import TESTS_PER_AGENT, Spec  # noqa: E402
from oacbench import cassettes, impls, phases, profiling, report, results_view, targets, watch_latency  # noqa: E402
from oacbench.measure import rss_method  # noqa: E402
from oacbench.plan import PRESETS, Plan, preset  # noqa: E402
from oacbench.scenarios import Bench  # noqa: E402
from oacbench.workspace import Case, make_case  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results"
RUN_TIMEOUT_S = 1_800.0
SUITE = ("per agent: 2 capability tests + 3 tool tests (fixed mock, sequence mock, profile-overridden mock); every "
         "10th agent's fixed-mock tool is instead a JSON tool with a real ScriptTool handler and no mock (2 % of "
         "tests); profiles 'per-agent' = one MockProfile per agent, 'shared' = one profile covering every agent; "
         "slow suite: 5 tool tests per agent, each mocked by a callable taking 10 ms (sleep or busy-wait)")


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--preset", choices=sorted(PRESETS), default=os.environ.get("OAC_BENCH_PRESET", "default"))
    parser.add_argument("--sizes", help="comma-separated test counts (multiples of 5), overriding the preset")
    parser.add_argument("--reps", type=int, help="runs per measurement below 20,000 tests (median reported)")
    parser.add_argument("--large-reps", type=int, help="runs per measurement from 20,000 tests on")
    parser.add_argument("--ours-oac", help="our oac executable (default: this checkout installed into a "
                        "virtualenv on the anchor's Python, under the cache directory)")
    parser.add_argument("--anchor-python", help="Python 3.12 used to create the anchor's virtualenv")
    parser.add_argument("--work", type=Path, default=impls.CACHE / "work")
    parser.add_argument("--results", type=Path, default=RESULTS)
    parser.add_argument("--keep", action="store_true", help="keep the generated projects under --work")
    parser.add_argument("--only", choices=["results-view", "watch", "cassettes"],
                        help="run only this scenario (results-view: oac results/report on a 50,000-line history; "
                        "watch: oac test --watch latency and memory at 5,000 tests, and oac coverage; "
                        "cassettes: an agent test through a real harness, replayed vs scripted)")
    return parser.parse_args(argv)


def machine() -> dict[str, Any]:
    model = ""
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.exists():
        model = next((line.split(":", 1)[1].strip() for line in cpuinfo.read_text().splitlines()
                      if line.startswith("model name")), "")
    return {"cpus": os.cpu_count(), "cpu": model, "platform": platform.platform(), "rss_method": rss_method()}


class Runner:
    def __init__(self, plan: Plan, bench: Bench, work: Path, keep: bool) -> None:
        self.plan, self.bench, self.work, self.keep = plan, bench, work, keep
        self.profiles: dict[str, Any] = {}
        self.phases: dict[str, Any] = {}
        self.flat_cases: list[Case] = []

    def labels(self, tests: int, shape: str) -> list[str]:
        chosen = []
        for label in self.bench.impls:
            why = self.plan.skipped(label, tests, shape)
            if why is None:
                chosen.append(label)
            else:
                self.bench.note(why)
        return chosen

    def drop(self, case: Case) -> None:
        if not self.keep:
            shutil.rmtree(self.work / case.name, ignore_errors=True)

    def size(self, tests: int, shape: str) -> None:
        labels = self.labels(tests, shape)
        if "ours" not in labels:
            return
        reps = self.plan.reps_for(tests)
        if reps < 5:
            self.bench.note(f"{tests:,} tests, {shape} profiles: {reps} run(s) per measurement, not a median of 5")
        case = make_case(self.work, f"n{tests}-{shape}", Spec.for_tests(tests, profiles=shape), labels)
        self.bench.log(f"case {case.name}: {case.spec.agents} agents, {len(case.spec.handler_agents())} handler tools")
        self.bench.cold_and_warm(case, labels, reps)
        if shape == "per-agent" and tests >= targets.FLAT_FROM:  # each step's time per test, for the flatness target
            self.time_steps(f"warm, {tests:,} tests", case, cold=False)
        if tests == self.plan.edit_size and shape in self.plan.edit_shapes:
            self.bench.edit_agent(case, labels, reps, agent=case.spec.agents // 2)
            handlers = case.spec.handler_agents()
            if handlers:
                self.bench.edit_handler(case, labels, reps, agent=handlers[len(handlers) // 2])
            if self.plan.profile and "warm" not in self.profiles:
                self.profile("warm", case, cold=False)
                agent = case.spec.agents // 2
                case.set_spec(case.spec.with_edit(agent, reps + 1))
                self.profile("edit-1-agent", case, cold=False)
                self.bench.settle(case, [label for label in labels if label != "ours"])
            self.bench.long_history(case, labels, reps)
            self.bench.list_vs_warm(case, reps)
            self.time_steps(f"cold, {tests:,} tests", case, cold=True)
            self.mock_only(tests, shape, labels, reps)
        if tests == self.plan.compile_size and shape == "per-agent":
            self.compile(tests, labels, reps)
        largest = max(self.plan.sizes)
        if self.plan.profile_largest and tests == largest > self.plan.edit_size and shape == "per-agent":
            self.profile(f"warm at {largest:,} tests", case, cold=False)
        if shape == "per-agent" and tests >= targets.FLAT_FROM and self.plan.flat_reps:
            self.flat_cases.append(case)  # kept (warm) for the interleaved flatness runs at the end
        else:
            self.drop(case)

    def compile(self, tests: int, labels: list[str], reps: int) -> None:
        """`oac compile` of the same registry, in its own copy (a cold compile deletes the project's state)."""
        case = make_case(self.work, f"compile-n{tests}", Spec.for_tests(tests), labels)
        self.bench.log(f"case {case.name}: oac compile of {case.spec.agents} agents, {self.plan.compile_dialects}")
        self.bench.compile(case, labels, reps, self.plan.compile_dialects, agent=case.spec.agents // 2)
        self.drop(case)

    def flatness(self) -> None:
        """Our warm runs at every per-agent size from 1,000 on, the sizes taking turns in each rep."""
        if len(self.flat_cases) >= 3:
            sizes = ", ".join(f"{case.spec.tests:,}" for case in self.flat_cases)
            self.bench.log(f"warm runs at {sizes} tests, interleaved ({self.plan.flat_reps} reps), for flatness")
            self.bench.interleaved_warm(self.flat_cases, self.plan.flat_reps)
        for case in self.flat_cases:
            self.drop(case)
        self.flat_cases = []

    def mock_only(self, tests: int, shape: str, labels: list[str], reps: int) -> None:
        """Cold again on the same suite minus its handler tests, to separate handler cost from the rest."""
        spec = Spec.for_tests(tests, profiles=shape, handler_every=0)
        case = make_case(self.work, f"n{tests}-{shape}-mock-only", spec, labels)
        self.bench.cold_only(case, labels, reps, "cold, mock-only suite (no handler tests)")
        if self.plan.profile:
            self.profile("cold mock-only", case, cold=True)
        self.time_steps(f"cold, {tests:,} tests, mock-only suite", case, cold=True)
        self.drop(case)

    def slow(self, kind: str) -> None:
        spec = Spec.for_tests(self.plan.slow_tests, slow_ms=self.plan.slow_ms, slow_kind=kind, handler_every=0)
        labels = list(self.bench.impls)
        case = make_case(self.work, f"slow-{kind}", spec, labels)
        self.bench.parallel(case, labels, self.plan.reps, self.plan.jobs)
        self.drop(case)

    def profile(self, name: str, case: Case, *, cold: bool) -> None:
        slug = re.sub(r"[^A-Za-z0-9]+", "-", name).strip("-")
        prefix = self.work / "profiles" / f"{slug}-{case.name}"
        self.bench.log(f"profiling ours, {name}, {case.name} (cProfile)")
        summary = profiling.profile(self.bench.impls["ours"], case, prefix, cold=cold, timeout=RUN_TIMEOUT_S)
        summary["case"] = case.name
        self.profiles[name] = summary

    def time_steps(self, name: str, case: Case, *, cold: bool) -> None:
        """Where our run's time and memory go, step by step, by the wall clock (median of a few runs)."""
        if not self.plan.phase_runs:
            return
        self.bench.log(f"timing the steps of our {name} run ({self.plan.phase_runs} runs)")
        result = phases.measure(self.bench.impls["ours"], case, cold=cold, runs=self.plan.phase_runs,
                                timeout=RUN_TIMEOUT_S)
        self.phases[name] = result

    def cold_profile(self) -> None:
        tests = self.plan.cold_profile_size
        case = make_case(self.work, f"profile-n{tests}", Spec.for_tests(tests), ["ours"])
        self.profile("cold", case, cold=True)
        self.drop(case)


def only_results_view(args: argparse.Namespace) -> int:
    """`--only results-view`: no anchor, no generated project; writes results/results-view-<timestamp>.json."""
    ours = impls.find_ours(args.ours_oac)
    impls.precompile(ours)
    result = results_view.run(ours, args.reps or 5)
    result["machine"] = machine()
    stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    args.results.mkdir(parents=True, exist_ok=True)
    (args.results / f"results-view-{stamp}.json").write_text(json.dumps(result, indent=2) + "\n")
    return 0 if result["target"]["ok"] else 1


def only_watch(args: argparse.Namespace) -> int:
    """`--only watch`: no anchor; writes results/watch-<timestamp>.json and prints it."""
    result = watch_latency.run(impls.find_ours(args.ours_oac), args.reps or 10)
    result["machine"] = machine()
    stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    args.results.mkdir(parents=True, exist_ok=True)
    (args.results / f"watch-{stamp}.json").write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))
    return 0 if result["target"]["ok"] else 1


def only_cassettes(args: argparse.Namespace) -> int:
    """`--only cassettes`: no anchor; the replayed vs scripted agent test of the preset's harnesses, with its
    targets; writes results/cassettes-<timestamp>.json."""
    plan = preset(args.preset)
    bench = Bench({"ours": impls.find_ours(args.ours_oac)}, timeout=RUN_TIMEOUT_S)
    for harness in plan.cassette_harnesses:
        cassettes.measure(bench, bench.impls["ours"], harness, args.reps or plan.cassette_reps, args.work)
    found = targets.cassette_targets(bench.rows)
    markdown = report.render(bench.rows, found, bench.checks, bench.notes)
    print("\n" + markdown, flush=True)
    stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    args.results.mkdir(parents=True, exist_ok=True)
    payload = {"timestamp": stamp, "machine": machine(), "rows": [row.as_dict() for row in bench.rows],
               "targets": [t.as_dict() for t in found], "notes": bench.notes}
    (args.results / f"cassettes-{stamp}.json").write_text(json.dumps(payload, indent=2) + "\n")
    return 0 if found and all(t.ok for t in found) else 1


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.only == "results-view":
        return only_results_view(args)
    if args.only == "watch":
        return only_watch(args)
    if args.only == "cassettes":
        return only_cassettes(args)
    sizes = tuple(int(s) for s in args.sizes.split(",")) if args.sizes else None
    plan = preset(args.preset, sizes=sizes, reps=args.reps, large_reps=args.large_reps)
    anchor = impls.ensure_anchor(impls.CACHE / "anchor-venv", args.anchor_python)
    # one interpreter for both (the anchor needs >= 3.12); --ours-oac runs ours on whatever Python it names
    ours = impls.find_ours(args.ours_oac) if args.ours_oac else impls.ensure_ours_on(
        impls.find_python312(args.anchor_python))
    for impl in (ours, anchor):
        impls.precompile(impl)
    bench = Bench({"ours": ours, "anchor": anchor}, timeout=RUN_TIMEOUT_S)
    bench.log(ours.describe())
    bench.log(anchor.describe())
    info = machine()
    bench.log(f"machine: {info}")
    runner = Runner(plan, bench, args.work, args.keep)
    for tests in plan.sizes:
        for shape in plan.shapes:
            runner.size(tests, shape)
    runner.flatness()
    for kind in plan.slow_kinds:
        runner.slow(kind)
    if plan.profile:
        runner.cold_profile()
    for harness in plan.cassette_harnesses:
        cassettes.measure(bench, ours, harness, plan.cassette_reps, args.work)
    edit_ok = {c.case: c.ok for c in bench.checks if c.name.startswith("edit 1 agent")}
    found = targets.evaluate(bench.rows, edit_ok)
    markdown = report.render(bench.rows, found, bench.checks, bench.notes)
    markdown += "\n## Where our time goes (wall clock, step by step)\n"
    for name, result in runner.phases.items():
        markdown += "\n" + "\n".join(phases.render(f"Our {name} run", result)) + "\n"
    warm = sorted((r for n, r in runner.phases.items() if n.startswith("warm") and "error" not in r),
                  key=lambda r: r["tests"])
    if len(warm) >= 2:
        markdown += "\n" + "\n".join(phases.render_growth(warm)) + "\n"
    for name, summary in runner.profiles.items():
        markdown += "\n" + "\n".join(profiling.render(f"Profile of our {name} run", summary)) + "\n"
    print("\n" + markdown, flush=True)
    stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    payload = {
        "timestamp": stamp, "preset": args.preset, "plan": asdict(replace(plan)), "machine": info,
        "implementations": {label: {"oac": str(i.oac), "version": i.version, "python": impls.python_version(i.python)}
                            for label, i in bench.impls.items()},
        "suite": {"tests_per_agent": TESTS_PER_AGENT, "handler_every": Spec(agents=1).handler_every,
                  "description": SUITE},
        "rows": [row.as_dict() for row in bench.rows], "targets": [t.as_dict() for t in found],
        "checks": [c.as_dict() for c in bench.checks], "notes": bench.notes, "profiles": runner.profiles,
        "phases": runner.phases,
        "duration_s": round(time.perf_counter() - bench.started, 1),
    }
    written = report.write(args.results, stamp, payload, markdown)
    bench.log(f"wrote {written} (+ latest.json, latest.md)")
    return 1 if any(row.problems for row in bench.rows) else 0


if __name__ == "__main__":
    raise SystemExit(main())
