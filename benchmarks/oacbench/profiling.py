"""Profile our `oac test` on a prepared case with cProfile (profile_child.py, run by our venv's Python)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

from oacbench.impls import Implementation
from oacbench.measure import clean_env, parse_summary
from oacbench.workspace import Case

CHILD = Path(__file__).resolve().parent / "profile_child.py"


def profile(ours: Implementation, case: Case, out_prefix: Path, *, cold: bool, timeout: float) -> dict[str, Any]:
    """Profile one run of ours on `case` (after a reset when `cold`); return the child's summary."""
    if cold:
        case.reset("ours")
    argv = [str(ours.python), str(CHILD), str(out_prefix), "--", *case.argv("ours", Path("oac"))]
    done = subprocess.run(argv, cwd=case.dirs["ours"], env=clean_env(), capture_output=True, text=True,
                          timeout=timeout)
    summary_path = Path(f"{out_prefix}.json")
    if done.returncode != 0 or not summary_path.exists():
        return {"error": f"profiler exited {done.returncode}: {(done.stdout + done.stderr)[-600:]}"}
    summary: dict[str, Any] = json.loads(summary_path.read_text(encoding="utf-8"))
    summary["oac_summary"] = parse_summary(done.stdout)
    summary["raw_profile"] = f"{out_prefix}.prof"
    return summary


def render(name: str, summary: dict[str, Any], rows: int = 12) -> list[str]:
    if "error" in summary:
        return [f"### {name}", "", summary["error"]]
    lines = [f"### {name}: {summary['total_s']:.2f} s under cProfile ({summary.get('oac_summary')})", "",
             "Own time by package/module:", ""]
    lines += [f"- {b['bucket']}: {b['own_s']:.3f} s ({b['share']:.0%})" for b in summary["buckets"][:rows]]
    lines += ["", "Our functions by cumulative time:", ""]
    lines += [f"- {r['function']}: {r['cumulative_s']:.3f} s cumulative, {r['calls']} calls"
              for r in summary["top_cumulative_ours"][:rows]]
    lines += ["", "Top functions by own time:", ""]
    lines += [f"- {r['function']}: {r['own_s']:.3f} s own, {r['calls']} calls" for r in summary["top_own_time"][:rows]]
    return lines
