"""The cassette scenario (issue 35): a replayed agent test through a real harness costs no more than the scripted
one.

    python benchmarks/run.py --only cassettes [--reps 5]        (also part of every `doit bench` run)

The monitoring example's three-turn agent test, `oac test --force --invoker H --dialect H`, in two copies: one
with its model script (scripted), one without it whose cassette is recorded first, in the same run, through the
loopback proxy from the fake upstream the tests use (127.0.0.1). Then, interleaved per rep, each copy runs once,
the order alternating: the replayed copy can only pass from its cassette (it has no script, and the upstream is
stopped). The ratio of the medians is the target (`targets.CASSETTE_LIMIT`); a harness that is not installed is
a note, not a pass.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from oacbench.impls import Implementation
from oacbench.measure import run_measured
from oacbench.scenarios import Bench, Row

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "monitoring"
TEST = "quiet-alert-quiet"
SCRIPTED = "agent test via {}, scripted"
REPLAYED = "agent test via {}, replayed from its cassette"


def available(harness: str) -> str | None:
    """Why `harness` cannot run here, or None when its binary is installed."""
    root = Path(os.environ.get("HARNESS_DIR") or Path.home() / ".cache" / "oac" / "harnesses")
    try:
        entry = json.loads((root / "status.json").read_text())["harnesses"][harness]
    except (OSError, ValueError, KeyError):
        return f"{harness}: no entry in {root}/status.json (run .ci/install-harnesses)"
    if not entry.get("available") or not Path(entry.get("bin", "")).exists():
        return f"{harness}: {entry.get('reason', 'binary missing')}"
    return None


def _copy(work: Path, name: str) -> Path:
    root = work / name
    shutil.rmtree(root, ignore_errors=True)
    shutil.copytree(EXAMPLE, root, ignore=shutil.ignore_patterns(".oac", "__pycache__", "cassettes"))
    return root


def _record(oac: Path, root: Path, run: tuple[str, ...], timeout: float) -> str | None:
    """Record the replayed copy's cassette from the fake upstream; None, or what went wrong."""
    sys.path.insert(0, str(REPO / "tests" / "agents"))
    try:
        from fake_upstream import FakeUpstream  # the tests' stand-in for a provider, on 127.0.0.1
    finally:
        sys.path.remove(str(REPO / "tests" / "agents"))
    with FakeUpstream() as fake:
        env = {**os.environ, "OAC_RECORD_BASE_URL": fake.base_url}
        done = subprocess.run([str(oac), "test", *run, "--record", "all", "--force"], cwd=root, env=env,
                              capture_output=True, text=True, timeout=timeout)
    if "passed=1" not in done.stdout:
        return f"recording did not pass: {(done.stdout + done.stderr).strip()[-300:]}"
    return None


def measure(bench: Bench, ours: Implementation, harness: str, reps: int, work: Path) -> None:
    """Adds the two rows (scripted, replayed) for `harness` to `bench.rows`; a note when it cannot run."""
    why = available(harness)
    if why is not None:
        bench.note(f"cassette scenario not run: {why}")
        return
    run = ("--invoker", harness, "--dialect", harness)
    scripted, replayed = _copy(work, f"cassette-{harness}-scripted"), _copy(work, f"cassette-{harness}-replayed")
    (replayed / "agents_scripts.py").unlink()  # it can only pass from its cassette
    problem = _record(ours.oac, replayed, run, bench.timeout)
    rows = [Row(SCRIPTED.format(harness), "monitoring", 1, "none", "ours"),
            Row(REPLAYED.format(harness), "monitoring", 1, "none", "ours")]
    if problem is not None:
        rows[1].problems.append(problem)
    for rep in range(reps if problem is None else 0):  # interleaved: a load change hits both alike
        pairs = list(zip((scripted, replayed), rows))
        # the order alternates: whichever runs second in a pair measured ~5 % slower (the first's harness
        # processes still winding down), so a fixed order would bias the ratio
        for root, row in pairs if rep % 2 == 0 else pairs[::-1]:
            row.load.append(round(os.getloadavg()[0], 2))
            result = run_measured([str(ours.oac), "test", *run, "--force"], cwd=root, timeout=bench.timeout)
            row.walls.append(result.wall_s)
            row.rss_kb.append(result.rss_kb)
            if result.returncode != 0 or result.summary.get("passed") != 1:
                row.problems.append(f"rep {rep}: exit {result.returncode}, {result.summary}: {result.tail[-300:]}")
    for row in rows:
        bench.rows.append(row)
        bench.log(f"{row.scenario:<44} median {row.median_s:7.3f}s (n={len(row.walls)})"
                  + (f"  PROBLEMS: {row.problems[:2]}" if row.problems else ""))
    shutil.rmtree(scripted, ignore_errors=True)
    shutil.rmtree(replayed, ignore_errors=True)

