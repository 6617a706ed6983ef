"""Time the steps of one `oac test` run by the wall clock, without a profiler; runs under OUR venv's Python.

    python phases_child.py OUT.json -- oac test agents:registry --config prod --results R

cProfile charges every Python call, so it inflates code made of many small calls (matching, validation) and
hides what the disk and the kernel cost. Here a fixed list of the engine's functions is wrapped with
perf_counter (about a microsecond per call), garbage-collector passes are timed through `gc.callbacks`, and
the resident set size is read after each stage. The result says where a run's wall time and memory go, stage
by stage, as the benchmark measured it.
"""

from __future__ import annotations

import functools
import gc
import importlib
import json
import os
import resource
import sys
import time
from pathlib import Path
from typing import Any, Callable

from in_process import command_line, run_oac

STARTED = time.perf_counter()

# (label, module, attribute): what is timed. Labels with a dot are parts of the label before the dot.
TIMED = (
    ("plan", "open_agent_compiler.tasks.graph", "TestPlan.__init__"),
    ("plan.load registry", "open_agent_compiler.tasks.planning", "load"),
    ("plan.discover tests", "open_agent_compiler.tasks.planning", "discover_tests"),
    ("plan.compile in memory", "open_agent_compiler.tasks.planning", "compile_dialect"),
    ("plan.keys", "open_agent_compiler.tasks.planning", "test_keys"),
    ("doit", "doit.doit_cmd", "DoitMain.run"),
    ("doit.compile task (.oac/build writes)", "open_agent_compiler.tasks.graph", "compile_action"),
    ("doit.test actions", "open_agent_compiler.tasks.graph", "test_action"),
    ("doit.test actions: records", "open_agent_compiler.tasks.graph", "append_record"),
    ("doit.test actions: records", "open_agent_compiler.tasks.graph", "build_record"),
)
RUN_CASE = ("open_agent_compiler.tasks.graph", "run_case")  # timed per test kind

totals: dict[str, float] = {}
calls: dict[str, int] = {}
rss_mb: dict[str, float] = {}
gc_clock = {"s": 0.0, "passes": 0, "since": 0.0}


def _current_rss_mb() -> float:
    try:
        with open("/proc/self/statm", encoding="ascii") as handle:
            return int(handle.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20
    except OSError:
        return float("nan")


def _on_gc(phase: str, info: dict[str, Any]) -> None:
    if phase == "start":
        gc_clock["since"] = time.perf_counter()
    else:
        gc_clock["s"] += time.perf_counter() - gc_clock["since"]
        gc_clock["passes"] += 1


def _timed(label: str | Callable[..., str], func: Callable[..., Any], checkpoint: str | None) -> Callable[..., Any]:
    @functools.wraps(func)  # keeps a stored __signature__, which doit reads to pass `task`
    def timed(*args: Any, **kwargs: Any) -> Any:
        name = label(*args) if callable(label) else label
        started = time.perf_counter()
        try:
            return func(*args, **kwargs)
        finally:
            totals[name] = totals.get(name, 0.0) + time.perf_counter() - started
            calls[name] = calls.get(name, 0) + 1
            if checkpoint:
                rss_mb[checkpoint] = _current_rss_mb()
    return timed


def _install() -> None:
    checkpoints = {"plan": "after planning", "doit": "after doit", "plan.load registry": "after loading the registry"}
    for label, module_name, attribute in TIMED:
        owner: Any = importlib.import_module(module_name)
        *path, name = attribute.split(".")
        for part in path:
            owner = getattr(owner, part)
        setattr(owner, name, _timed(label, getattr(owner, name), checkpoints.get(label)))
    module = importlib.import_module(RUN_CASE[0])
    original = getattr(module, RUN_CASE[1])
    setattr(module, RUN_CASE[1], _timed(lambda case, *_: f"doit.test actions: run {case.kind} tests", original, None))


def breakdown(total: float, imports: float) -> list[dict[str, Any]]:
    """Disjoint rows that add up to the whole run: each timed step with nested steps gets an 'other' row."""
    def row(step: str, seconds: float) -> dict[str, Any]:
        return {"step": step, "s": round(seconds, 4), "calls": calls.get(step, 0)}

    order = [label for label, _, _ in TIMED]

    def parts(prefix: str) -> list[str]:  # in pipeline order
        return sorted((k for k in totals if k.startswith(prefix)), key=lambda k: (order.index(k) if k in order else 99, k))

    plan, doit, action = (totals.get(k, 0.0) for k in ("plan", "doit", "doit.test actions"))
    in_plan, in_action = parts("plan."), parts("doit.test actions:")
    compile_task = totals.get("doit.compile task (.oac/build writes)", 0.0)
    return [
        row("imports (oac, pydantic, doit, click)", imports),
        *(row(k, totals[k]) for k in in_plan),
        row("plan.other", plan - sum(totals[k] for k in in_plan)),
        row("doit.compile task (.oac/build writes)", compile_task),
        *(row(k, totals[k]) for k in in_action),
        row("doit.test actions: other", action - sum(totals[k] for k in in_action)),
        row("doit.engine (task loading, up-to-date checks, dispatch, state saving)", doit - compile_task - action),
        row("CLI, summary, exit", total - imports - plan - doit),
    ]


def main(argv: list[str]) -> int:
    parsed = command_line(argv, __doc__ or "")
    if parsed is None:
        return 2
    out, command = parsed
    imported = [0.0]

    def after_import() -> None:
        imported[0] = time.perf_counter()
        rss_mb["after imports"] = _current_rss_mb()
        _install()
        gc.callbacks.append(_on_gc)

    code = run_oac(command, imported=after_import)
    total = time.perf_counter() - STARTED
    result = {
        "exit_code": code, "total_s": round(total, 4),
        "steps": breakdown(total, imported[0] - STARTED),
        "gc_s": round(gc_clock["s"], 4), "gc_passes": gc_clock["passes"],
        "rss_mb": {k: round(v, 1) for k, v in rss_mb.items()},
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
    }
    Path(out).write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
