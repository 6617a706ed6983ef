"""Where our run's wall time and memory go, step by step (phases_child.py, run by our venv's Python).

The median of a few runs per step. Rendered as one table per scenario, and as time per test for the same
steps at every warm size (what grows faster than the number of tests).
"""

from __future__ import annotations

import json
import statistics
import subprocess
import tempfile
from pathlib import Path
from typing import Any

from oacbench.impls import Implementation
from oacbench.measure import clean_env, parse_summary
from oacbench.workspace import Case

CHILD = Path(__file__).resolve().parent / "phases_child.py"


def measure(ours: Implementation, case: Case, *, cold: bool, runs: int, timeout: float) -> dict[str, Any]:
    """`runs` timed runs of ours on `case` (each after a reset when `cold`); the median of every step."""
    samples: list[dict[str, Any]] = []
    for _ in range(runs):
        if cold:
            case.reset("ours")
        with tempfile.TemporaryDirectory() as scratch:
            out = Path(scratch) / "phases.json"
            argv = [str(ours.python), str(CHILD), str(out), "--", *case.argv("ours", Path("oac"))]
            done = subprocess.run(argv, cwd=case.dirs["ours"], env=clean_env(), capture_output=True, text=True,
                                  timeout=timeout)
            if done.returncode != 0 or not out.exists():
                return {"error": f"phase timer exited {done.returncode}: {(done.stdout + done.stderr)[-600:]}"}
            sample = json.loads(out.read_text(encoding="utf-8"))
        sample["oac_summary"] = parse_summary(done.stdout)
        samples.append(sample)
    steps = [row["step"] for row in samples[0]["steps"]]
    per_step = {step: statistics.median(next(r["s"] for r in s["steps"] if r["step"] == step) for s in samples)
                for step in steps}
    calls = {row["step"]: row["calls"] for row in samples[0]["steps"]}
    return {
        "case": case.name, "tests": case.spec.tests, "cold": cold, "runs": runs,
        "total_s": statistics.median(s["total_s"] for s in samples),
        "steps": [{"step": step, "s": round(per_step[step], 4), "calls": calls[step]} for step in steps],
        "gc_s": statistics.median(s["gc_s"] for s in samples),
        "rss_mb": {key: statistics.median(s["rss_mb"][key] for s in samples if key in s["rss_mb"])
                   for key in samples[0]["rss_mb"]},
        "peak_rss_mb": max(s["peak_rss_mb"] for s in samples),
        "oac_summary": samples[-1]["oac_summary"],
    }


def render(name: str, result: dict[str, Any]) -> list[str]:
    if "error" in result:
        return [f"### {name}", "", result["error"]]
    total = result["total_s"]
    lines = [f"### {name}: {total:.3f} s, peak RSS {result['peak_rss_mb']:.1f} MB (wall clock, median of "
             f"{result['runs']}; interpreter start not included; {result['oac_summary']})", "",
             "| step | s | share |", "|---|---:|---:|"]
    lines += [f"| {row['step']} | {row['s']:.3f} | {row['s'] / total:.0%} |" for row in result["steps"]]
    lines += ["", f"Garbage collection, inside the steps above: {result['gc_s']:.3f} s. Resident memory: "
              + ", ".join(f"{key} {value:.1f} MB" for key, value in result["rss_mb"].items()) + "."]
    return lines


def render_growth(results: list[dict[str, Any]]) -> list[str]:
    """Each step's time per test at every size (warm runs, smallest first): a step whose cost per test rises
    with the size is what bends the curve; fixed costs (imports, exit) fall."""
    if len(results) < 2:
        return []
    sizes = [r["tests"] for r in results]
    header = " | ".join(f"µs/test at {n:,}" for n in sizes)
    lines = [f"### Time per test by step, warm runs of {', '.join(f'{n:,}' for n in sizes)} tests", "",
             f"| step | {header} | ratio last/first |", "|---|" + "---:|" * (len(sizes) + 1)]
    steps = [row["step"] for row in results[-1]["steps"]]
    fixed = ("imports", "CLI, summary, exit")

    def per_test(result: dict[str, Any], step: str | None) -> float:
        if step is None:  # everything but the fixed costs
            seconds = sum(r["s"] for r in result["steps"] if not r["step"].startswith(fixed))
        elif step == "gc":
            seconds = result["gc_s"]
        else:
            seconds = next((r["s"] for r in result["steps"] if r["step"] == step), 0.0)
        return seconds / result["tests"] * 1e6

    for label, step in [*((s, s) for s in steps), ("all but imports and exit", None),
                        ("(garbage collection, inside the steps)", "gc")]:
        values = [per_test(r, step) for r in results]
        if not any(values):
            continue
        ratio = f"{values[-1] / values[0]:.2f}" if values[0] >= 0.5 else "—"
        lines.append(f"| {label} | " + " | ".join(f"{v:.1f}" for v in values) + f" | {ratio} |")
    return lines
