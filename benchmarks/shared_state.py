"""Shared green state on PostgreSQL against local sqlite, measured in one run (issue: shared state).

    python benchmarks/shared_state.py [--tests 5000] [--reps 5] [--before OLD/src] [--after NEW/src]
                                      [--out benchmarks/results/shared-state-latest.json]

Starts a real PostgreSQL server (initdb + pg_ctl into a temporary folder on 127.0.0.1, as the tests do), generates
the synthetic suite, and times, interleaved rep by rep (median reported):
- `local warm`: a warm `oac test` on local sqlite only;
- `shared warm`: a warm `oac test` with the shared state set (one round trip at planning, nothing to push);
- `second machine`: a fresh checkout (no .oac) whose keys are all green in the database: every test adopted and
  skipped.
Targets: shared warm ≤ 1.5× local warm; second machine ≤ 1.5× local warm.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent / "tests" / "shared_state")]

from generate import Spec, generate  # noqa: E402
from pg_server import PgServer, unavailable  # noqa: E402

OAC = Path(sys.executable).with_name("oac")
TARGET = 1.5
PROJECT = "oac-bench"  # every checkout one project (the default, the folder name, would differ per checkout)


CPU: dict[str, list[float]] = {}  # what `timed` measured last: CPU seconds (user + system) of the run's processes


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def timed(argv: list[str], cwd: Path, env: dict[str, str], skipped: int | None = None) -> float:
    """Wall time of one run (its CPU time goes to CPU["last"]); `skipped`: how many tests it must skip (a timed
    warm run that ran tests would measure something else)."""
    cpu = _children_cpu()
    started = time.perf_counter()
    done = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=1800)
    elapsed = time.perf_counter() - started
    CPU["last"] = [_children_cpu() - cpu]
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} in {cwd} exited {done.returncode}:\n{done.stdout[-2000:]}{done.stderr}")
    if skipped is not None and f" passed=0 failed=0 skipped={skipped} " not in done.stdout:
        raise SystemExit(f"{' '.join(argv)} in {cwd} did not skip all {skipped} tests:\n{done.stdout[-500:]}")
    return elapsed



def precompile(src: Path | None) -> None:
    """Write the bytecode of the version measured (`src`, else the installed package), as an installed package
    has it, so no timed run pays for compiling it."""
    package = src / "open_agent_compiler" if src else None
    code = ("import compileall, os, sys, open_agent_compiler as p; "
            "compileall.compile_dir(sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(p.__file__), quiet=1)")
    subprocess.run([sys.executable, "-c", code, *([str(package)] if package else [])], check=True,
                   env={k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"})

def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tests", type=int, default=5000)
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--before", type=Path, default=None,
                        help="the src folder of an earlier version (e.g. from `git archive`): timed in the same "
                             "run, interleaved, with folders and a database of its own")
    parser.add_argument("--after", type=Path, default=None,
                        help="the src folder of the version to measure (default: the installed one)")
    parser.add_argument("--out", type=Path, default=HERE / "results" / "shared-state-latest.json")
    args = parser.parse_args()
    reason = unavailable()
    if reason:
        raise SystemExit(f"cannot benchmark the shared state: {reason}")
    work = Path(tempfile.mkdtemp(prefix="oac-shared-bench-"))
    server = PgServer().init()
    try:
        source = generate(work / "source", Spec.for_tests(args.tests))
        (source / "pyproject.toml").write_text(f'[tool.oac]\nproject = "{PROJECT}"\n')
        # PYTHONDONTWRITEBYTECODE would make every run compile a version's freshly edited source again
        base_env = {k: v for k, v in os.environ.items()
                    if k not in ("OAC_STATE_URL", "OAC_HERMETIC", "PYTHONPATH", "PYTHONDONTWRITEBYTECODE")}
        after = args.after.resolve() if args.after else None
        versions = {"after": after} if args.before is None else {"before": args.before.resolve(), "after": after}
        argv = [str(OAC), "test", "agents:registry", "--config", "prod"]
        # The second machine checks out where the first one did (as CI runners do): the synthetic registry's
        # handler tools name their scripts by absolute path, so their definitions (and keys) follow the folder.
        fresh = work / "fresh"
        envs: dict[str, tuple[dict[str, str], dict[str, str]]] = {}
        for version, src in versions.items():
            code = {"PYTHONPATH": str(src)} if src else {}
            precompile(src)
            local_env = {**base_env, **code}
            shared_env = {**local_env, **server.env(server.fresh_database(f"oac_{version}"))}
            envs[version] = (local_env, shared_env)
            for target in (work / f"local-{version}", work / f"shared-{version}", fresh):
                shutil.copytree(source, target)
            # cold runs: every test proved once, locally and in the database (a version's keys are its own)
            timed(argv, work / f"local-{version}", local_env)
            timed(argv, work / f"shared-{version}", shared_env)
            timed(argv, fresh, shared_env)
            shutil.rmtree(fresh)
        samples: dict[str, dict[str, list[float]]] = {
            version: {"local warm": [], "shared warm": [], "second machine": []} for version in versions}
        cpu: dict[str, dict[str, list[float]]] = {
            version: {"local warm": [], "shared warm": [], "second machine": []} for version in versions}
        for rep in range(args.reps):
            for version, (local_env, shared_env) in envs.items():
                found, used = samples[version], cpu[version]
                found["local warm"].append(timed(argv, work / f"local-{version}", local_env, args.tests))
                used["local warm"] += CPU["last"]
                found["shared warm"].append(timed(argv, work / f"shared-{version}", shared_env, args.tests))
                used["shared warm"] += CPU["last"]
                shutil.copytree(source, fresh)
                found["second machine"].append(timed(argv, fresh, shared_env, args.tests))
                used["second machine"] += CPU["last"]
                shutil.rmtree(fresh)
        report: dict[str, object] = {"tests": args.tests, "reps": args.reps, "target": TARGET}
        for version in versions:
            medians = {name: statistics.median(values) for name, values in samples[version].items()}
            ratios = {name: medians[name] / medians["local warm"] for name in ("shared warm", "second machine")}
            # the same rep's runs follow each other, so their ratio suffers less from a machine whose load changes
            paired = {name: statistics.median(s / l for s, l in zip(samples[version][name],
                                                                     samples[version]["local warm"]))
                      for name in ratios}
            cpu_medians = {name: statistics.median(values) for name, values in cpu[version].items()}
            cpu_ratios = {name: cpu_medians[name] / cpu_medians["local warm"] for name in ratios}
            report[version] = {"samples_s": samples[version], "median_s": medians, "ratio_to_local_warm": ratios,
                               "median_of_paired_ratios": paired, "cpu_samples_s": cpu[version],
                               "cpu_median_s": cpu_medians, "cpu_ratio_to_local_warm": cpu_ratios,
                               "verdict": {name: "PASS" if ratio <= TARGET else "MISS"
                                           for name, ratio in ratios.items()}}
            for name, median in medians.items():
                ratio = (f"  {ratios[name]:.2f}x local warm (paired {paired[name]:.2f}x, CPU {cpu_ratios[name]:.2f}x;"
                         f" target <= {TARGET}x)") if name in ratios else ""
                print(f"{version:6s} {name:15s} {median:7.3f} s (CPU {cpu_medians[name]:6.3f} s){ratio}")
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(report, indent=2) + "\n")
    finally:
        server.close()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
