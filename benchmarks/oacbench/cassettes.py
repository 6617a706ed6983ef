"""The cassette scenario (issue 35): a replayed agent test through a real harness costs no more than the scripted
one.

    python benchmarks/run.py --only cassettes [--reps 12]        (also part of every `doit bench` run)

The monitoring example's three-turn agent test, `oac test --force --invoker H --dialect H`, in two copies of the
example, A and B. A's cassette is recorded first, in the same run, through the loopback proxy from the fake upstream
the tests use (127.0.0.1, without A's model script), and copied into B. Then each rep runs the test once scripted
and once replayed, the two copies swapping roles every rep (a copy is made scripted by putting its model script
back and its cassettes aside, replayed the other way round) and the order of the pair alternating every two reps:
a copy's own placement once cost ~70 ms a run whatever it ran, and whichever run of a pair comes second measured
~5 % slower (the first's harness processes still winding down). The target is on the median of the pairs' ratios
(replayed / scripted), which a drift of the machine's speed over the reps leaves alone; the ratio of the medians
is shown beside it. A replayed copy can only pass from its cassette (no script, the upstream stopped). A harness
that is not installed is a note, not a pass.
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


SCRIPT = "agents_scripts.py"


def _arrange(root: Path, mode: str) -> None:
    """Make `root` run its test `mode` ("scripted": its model script, no cassette; "replayed": the other way);
    what is put aside waits beside the copy, outside the project."""
    aside = root.with_name(root.name + "-aside")
    aside.mkdir(exist_ok=True)
    here, there = (root / SCRIPT, root / "cassettes"), (aside / SCRIPT, aside / "cassettes")
    back, away = (0, 1) if mode == "scripted" else (1, 0)
    if there[back].exists() and not here[back].exists():
        there[back].rename(here[back])
    if here[away].exists():
        here[away].rename(there[away])


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
    """Adds the two rows (scripted, replayed) for `harness` to `bench.rows`, walls in rep order (pairs); a note
    when it cannot run."""
    why = available(harness)
    if why is not None:
        bench.note(f"cassette scenario not run: {why}")
        return
    run = ("--invoker", harness, "--dialect", harness)
    copies = (_copy(work, f"cassette-{harness}-a"), _copy(work, f"cassette-{harness}-b"))
    _arrange(copies[0], "replayed")
    problem = _record(ours.oac, copies[0], run, bench.timeout)
    if problem is None:
        shutil.copytree(copies[0] / "cassettes", copies[1] / "cassettes")
    rows = {"scripted": Row(SCRIPTED.format(harness), "monitoring", 1, "none", "ours"),
            "replayed": Row(REPLAYED.format(harness), "monitoring", 1, "none", "ours")}
    if problem is not None:
        rows["replayed"].problems.append(problem)
    for rep in range(reps if problem is None else 0):
        roles = (("scripted", copies[0]), ("replayed", copies[1])) if rep % 2 == 0 else \
            (("replayed", copies[0]), ("scripted", copies[1]))
        for mode, root in roles if (rep // 2) % 2 == 0 else roles[::-1]:
            _arrange(root, mode)
            row = rows[mode]
            row.load.append(round(os.getloadavg()[0], 2))
            result = run_measured([str(ours.oac), "test", *run, "--force"], cwd=root, timeout=bench.timeout)
            row.walls.append(result.wall_s)
            row.rss_kb.append(result.rss_kb)
            if result.returncode != 0 or result.summary.get("passed") != 1:
                row.problems.append(f"rep {rep} ({root.name}): exit {result.returncode}, {result.summary}: "
                                    f"{result.tail[-300:]}")
    for row in rows.values():
        bench.rows.append(row)
        bench.log(f"{row.scenario:<44} median {row.median_s:7.3f}s (n={len(row.walls)})"
                  + (f"  PROBLEMS: {row.problems[:2]}" if row.problems else ""))
    for root in copies:
        shutil.rmtree(root, ignore_errors=True)
        shutil.rmtree(root.with_name(root.name + "-aside"), ignore_errors=True)
