"""The measured scenarios.

A scenario is a list of variants (one implementation, one way of running it). Every rep runs each variant once,
in order, so variants that are compared with each other are interleaved in time: load from other processes on
the machine hits both sides of a ratio alike.
"""

from __future__ import annotations

import os
import shutil
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from oacbench import history
from oacbench.impls import Implementation
from oacbench.measure import Measurement, run_measured
from oacbench.workspace import CONFIG, FACTORY, Case

Inspect = Callable[[list[dict[str, Any]]], list[str]]
HISTORY_LINES = 50_000
PAIRED_WARM = "warm, paired with edits"
EMPTY_HISTORY = "warm, empty history"
LONG_HISTORY = f"warm, {HISTORY_LINES:,}-line history"
INTERLEAVED_WARM = "warm, sizes interleaved"
LIST_PAIRED_WARM = "warm, paired with --list"
LIST = "oac test --list (green state)"


@dataclass
class Row:
    scenario: str
    case: str
    tests: int
    shape: str
    impl: str
    walls: list[float] = field(default_factory=list)
    rss_kb: list[int] = field(default_factory=list)
    appended: list[int] = field(default_factory=list)
    load: list[float] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    note: str = ""
    written: list[int] = field(default_factory=list)  # compile rows: files our compile reported written

    @property
    def median_s(self) -> float:
        return statistics.median(self.walls) if self.walls else float("nan")

    @property
    def peak_rss_kb(self) -> int:
        return max(self.rss_kb, default=0)

    def as_dict(self) -> dict[str, Any]:
        return {
            "scenario": self.scenario, "case": self.case, "tests": self.tests, "shape": self.shape,
            "impl": self.impl, "reps": len(self.walls), "median_s": round(self.median_s, 4),
            "walls_s": [round(w, 4) for w in self.walls], "peak_rss_kb": self.peak_rss_kb,
            "rss_kb": self.rss_kb, "records_appended": self.appended, "loadavg_1min": self.load,
            "problems": self.problems, "note": self.note, **({"files_written": self.written} if self.written else {}),
        }


@dataclass
class Check:
    name: str
    ok: bool
    detail: str
    case: str = ""

    def as_dict(self) -> dict[str, Any]:
        return {"name": self.name, "ok": self.ok, "detail": self.detail, "case": self.case}


@dataclass
class Variant:
    """One row of a scenario: `label`'s oac run in a given way, with what its summary line must say."""

    scenario: str
    label: str
    expect: dict[str, int]
    cold: bool = False
    results: Path | None = None
    extra: tuple[str, ...] = ()
    prepare: Callable[[int], None] | None = None
    inspect: Inspect | None = None
    note: str = ""
    argv: Callable[[Path], list[str]] | None = None  # another command than `oac test` (given the oac to run)


class Bench:
    """Runs scenarios and collects rows, verification checks and notes (e.g. where the anchor was capped)."""

    def __init__(self, impls: dict[str, Implementation], timeout: float) -> None:
        self.impls = impls
        self.timeout = timeout
        self.rows: list[Row] = []
        self.checks: list[Check] = []
        self.notes: list[str] = []
        self.started = time.perf_counter()

    def log(self, message: str) -> None:
        print(f"[{time.perf_counter() - self.started:7.1f}s] {message}", flush=True)

    def note(self, message: str) -> None:
        self.notes.append(message)
        self.log(f"NOTE: {message}")

    def measure(self, case: Case, variants: list[Variant], reps: int) -> dict[tuple[str, str], Row]:
        shape = case.spec.profiles if case.spec.slow_ms == 0 else "none"
        rows = {(v.scenario, v.label): Row(v.scenario, case.name, case.spec.tests, shape, v.label, note=v.note)
                for v in variants}
        for rep in range(reps):
            for variant in variants:
                self._once(case, variant, rows[(variant.scenario, variant.label)], rep)
        for row in rows.values():
            self.rows.append(row)
            flag = f"  PROBLEMS: {row.problems[:3]}" if row.problems else ""
            self.log(f"{row.scenario:<28} N={row.tests:<6} {row.shape:<9} {row.impl:<6} median {row.median_s:8.3f}s "
                     f"(n={len(row.walls)}) peak {row.peak_rss_kb / 1024:7.1f} MB{flag}")
        return rows

    def _once(self, case: Case, variant: Variant, row: Row, rep: int) -> None:
        if variant.prepare is not None:
            variant.prepare(rep)
        if variant.cold:
            case.reset(variant.label)
        offset = case.results_size(variant.label, variant.results)
        oac = self.impls[variant.label].oac
        argv = (variant.argv(oac) if variant.argv is not None
                else case.argv(variant.label, oac, *variant.extra, results=variant.results))
        row.load.append(round(os.getloadavg()[0], 2))
        result = run_measured(argv, cwd=case.dirs[variant.label], timeout=self.timeout)
        row.walls.append(result.wall_s)
        row.rss_kb.append(result.rss_kb)
        appended = case.records_after(variant.label, offset, variant.results)
        row.appended.append(len(appended))
        if "written" in result.summary:
            row.written.append(result.summary["written"])
        problems = _problems(result, variant.expect)
        if variant.inspect is not None:
            problems += variant.inspect(appended)
        row.problems.extend(f"rep {rep}: {p}" for p in problems)

    # scenarios ----------------------------------------------------------------------------------------------
    def cold_and_warm(self, case: Case, labels: list[str], reps: int) -> None:
        n = case.spec.tests
        self.measure(case, [Variant("cold", label, {"passed": n, "failed": 0}, cold=True) for label in labels], reps)
        self.measure(case, [Variant("warm", label, _warm(n)) for label in labels], reps)

    def interleaved_warm(self, cases: list[Case], reps: int) -> None:
        """Our warm run at every size, the sizes taking turns within each rep: the flatness target compares
        slopes between sizes, and measured in separate blocks minutes apart they move with the machine."""
        rows = [Row(INTERLEAVED_WARM, case.name, case.spec.tests, case.spec.profiles, "ours") for case in cases]
        variants = [Variant(INTERLEAVED_WARM, "ours", _warm(case.spec.tests)) for case in cases]
        for rep in range(reps):
            for case, variant, row in zip(cases, variants, rows):
                self._once(case, variant, row, rep)
        for row in rows:
            self.rows.append(row)
            self.log(f"{row.scenario:<28} N={row.tests:<6} {row.shape:<9} ours   median {row.median_s:8.3f}s "
                     f"(n={len(row.walls)})" + (f"  PROBLEMS: {row.problems[:3]}" if row.problems else ""))

    def settle(self, case: Case, labels: list[str]) -> None:
        """Run each label once, unmeasured, so its state catches up with the case's current files."""
        for label in labels:
            run_measured(case.argv(label, self.impls[label].oac), cwd=case.dirs[label], timeout=self.timeout)

    def cold_only(self, case: Case, labels: list[str], reps: int, scenario: str) -> None:
        n = case.spec.tests
        self.measure(case, [Variant(scenario, label, {"passed": n, "failed": 0}, cold=True) for label in labels], reps)

    def edit_agent(self, case: Case, labels: list[str], reps: int, agent: int) -> None:
        """Each rep: our warm run (nothing changed), then agent `agent` gets a new revision and every label runs."""
        n, mine = case.spec.tests, case.spec.tests_of_agent(agent)
        scenario = f"edit 1 agent of {case.spec.agents}"

        def prepare(rep: int) -> None:
            case.set_spec(case.spec.with_edit(agent, rep + 1))

        def inspect(records: list[dict[str, Any]]) -> list[str]:
            names = sorted(r.get("test_name", "?") for r in records)
            return [] if names == sorted(mine) else [f"appended {len(names)} records {names[:8]}, expected {sorted(mine)}"]

        ran = {"passed": len(mine), "skipped": n - len(mine), "failed": 0}
        variants = [Variant(PAIRED_WARM, "ours", _warm(n))]
        variants += [Variant(scenario, label, ran, prepare=prepare if i == 0 else None,
                             inspect=inspect if label == "ours" else None) for i, label in enumerate(labels)]
        rows = self.measure(case, variants, reps)
        ours = rows[(scenario, "ours")]
        self.checks.append(Check(
            f"{scenario} ({case.name}): only that agent's {len(mine)} tests ran (ours)", not ours.problems,
            f"records appended per run: {ours.appended}; expected {len(mine)} ({', '.join(sorted(mine))})"
            + (f"; problems: {ours.problems[:2]}" if ours.problems else ""),
            case=case.name,
        ))

    def edit_handler(self, case: Case, labels: list[str], reps: int, agent: int) -> None:
        n, test, scenario = case.spec.tests, f"a{agent}-tool0-handler", "edit 1 handler script"

        def inspect(records: list[dict[str, Any]]) -> list[str]:
            names = [r.get("test_name", "?") for r in records]
            return [] if names == [test] else [f"appended {names[:8]}, expected exactly [{test!r}]"]

        # The anchor's key does not cover handler contents: it reports every test as skipped.
        variants = [Variant(scenario, label, {"passed": int(label == "ours"), "skipped": n - int(label == "ours"),
                                              "failed": 0},
                            prepare=(lambda rep: case.edit_handler(agent, rep + 1)) if i == 0 else None,
                            inspect=inspect if label == "ours" else None) for i, label in enumerate(labels)]
        rows = self.measure(case, variants, reps)
        ours, anchor = rows[(scenario, "ours")], rows.get((scenario, "anchor"))
        self.checks.append(Check(
            f"{scenario} ({case.name}): only that tool's test ran (ours)", not ours.problems,
            f"records appended per run: {ours.appended}; expected 1 ({test})"
            + (f"; anchor appended {anchor.appended} (its key ignores script contents)" if anchor else ""),
            case=case.name,
        ))

    def long_history(self, case: Case, labels: list[str], reps: int) -> None:
        """Our warm run with an empty results file vs with 50,000 history lines, interleaved; the anchor with 50,000."""
        n = case.spec.tests
        for label in labels:
            lines = history.prefill(case.results(label), HISTORY_LINES)
            self.log(f"pre-filled {label} history: {lines} lines, {case.results_size(label) / 1e6:.1f} MB")
        variants = [Variant(LONG_HISTORY, label, _warm(n)) for label in labels]
        if "ours" in labels:
            empty = case.results("ours").with_name("empty-history.jsonl")
            history.truncate(empty)
            variants.insert(0, Variant(EMPTY_HISTORY, "ours", _warm(n), results=empty,
                                       note="--results points at an empty file; the green state lives elsewhere"))
        self.measure(case, variants, reps)

    def compile(self, case: Case, labels: list[str], reps: int, dialects: tuple[str, ...], agent: int) -> None:
        """`oac compile` of the whole registry into a target per dialect, each rep: cold (target and state
        deleted), unchanged (run again), one agent edited (agent `agent` gets a new revision). Our runs must
        report every file written, none, and only that agent's files."""
        agents = f"{case.spec.agents:,} agents"
        for dialect in dialects:
            variants: list[Variant] = []
            for kind in ("cold", "unchanged", "one agent edited"):
                scenario = f"compile {kind}, {dialect} ({agents})"
                for i, label in enumerate(labels):
                    target = case.dirs[label] / f"compiled-{dialect}"

                    def argv(oac: Path, target: Path = target) -> list[str]:
                        return [str(oac), "compile", FACTORY, "--config", CONFIG, "--target", str(target),
                                "--dialect", dialect]

                    prepare: Callable[[int], None] | None = None
                    if kind == "cold":
                        def prepare(rep: int, label: str = label, target: Path = target) -> None:
                            shutil.rmtree(target, ignore_errors=True)
                            case.reset(label)
                    elif kind == "one agent edited" and i == 0:
                        def prepare(rep: int) -> None:
                            case.set_spec(case.spec.with_edit(agent, 1_000 + rep))
                    expect = {} if label != "ours" else (
                        {"written": 0} if kind == "unchanged" else {"removed": 0, "kept": 0})
                    variants.append(Variant(scenario, label, expect, prepare=prepare, argv=argv))
            rows = self.measure(case, variants, reps)
            for kind, wanted in (("cold", lambda n: n > 0), ("one agent edited", lambda n: 0 < n <= 8)):
                ours = rows.get((f"compile {kind}, {dialect} ({agents})", "ours"))
                if ours is not None and ours.written and not all(wanted(n) for n in ours.written):
                    ours.problems.append(f"files written per run: {ours.written}")

    def list_vs_warm(self, case: Case, reps: int) -> None:
        """`oac test --list` (plans, asks doit whether each test is green, runs nothing) against our warm run,
        interleaved: the target is that listing costs no more than a warm run."""
        n = case.spec.tests

        def every_test_listed(records: list[dict[str, Any]]) -> list[str]:
            return [f"--list appended {len(records)} records"] if records else []

        self.measure(case, [Variant(LIST_PAIRED_WARM, "ours", _warm(n)),
                            Variant(LIST, "ours", {}, extra=("--list",), inspect=every_test_listed)], reps)

    def parallel(self, case: Case, labels: list[str], reps: int, jobs: int) -> None:
        n, kind = case.spec.tests, f"{case.spec.slow_ms} ms {case.spec.slow_kind}"
        cold = {"passed": n, "failed": 0}
        variants = [Variant(f"serial, {kind} tests", label, cold, cold=True) for label in labels]
        if "ours" in labels:
            variants.insert(1, Variant(f"-n {jobs}, {kind} tests", "ours", cold, cold=True, extra=("-n", str(jobs))))
        self.measure(case, variants, reps)


def _warm(n: int) -> dict[str, int]:
    return {"skipped": n, "failed": 0, "passed": 0}


def _problems(result: Measurement, expect: dict[str, int]) -> list[str]:
    problems: list[str] = []
    if result.returncode != 0:
        problems.append(f"exit {result.returncode}: {result.tail[-300:]}")
    elif expect and not result.summary:  # `--list` and `oac compile` print no test summary
        problems.append(f"no summary line: {result.tail[-300:]}")
    for key, wanted in expect.items():
        got = result.summary.get(key)
        if result.summary and got != wanted:
            problems.append(f"{key}={got}, expected {wanted}")
    return problems
