"""`pytest --oac` on a generated suite, two implementations interleaved: BEFORE (a source tree given with --before,
e.g. `git archive <commit> src | tar -x -C DIR`, put first on PYTHONPATH) and AFTER (the installed package).
Each round runs a cold session (no .oac state) and a warm one (every test green) of each, alternating, so load on
the machine falls on both alike. Prints the wall times and the BEFORE/AFTER ratios.

    python benchmarks/pytest_plugin.py --before /tmp/before/src --tests 1000 --rounds 2
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from generate import Spec, generate  # noqa: E402

PYTEST = [sys.executable, "-m", "pytest", "-q", "-p", "no:randomly", "-p", "no:cacheprovider",
          "--oac", "agents:registry", "--oac-config", "prod"]


def session(root: Path, source: str | None) -> float:
    env = dict(os.environ)
    env.pop("OAC_HERMETIC", None)
    if source:
        env["PYTHONPATH"] = source
    started = time.perf_counter()
    done = subprocess.run(PYTEST, cwd=root, env=env, capture_output=True, text=True)
    took = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"pytest failed in {root} (exit {done.returncode}):\n{done.stdout[-2000:]}{done.stderr}")
    return took


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", required=True, help="source tree (holding open_agent_compiler/) of BEFORE")
    parser.add_argument("--tests", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="oac-pytest-bench-") as scratch:
        base = generate(Path(scratch) / "suite", Spec.for_tests(args.tests, handler_every=0))
        (base / ".git").mkdir()
        roots = {}
        for name in ("before", "after"):
            roots[name] = Path(scratch) / name
            shutil.copytree(base, roots[name])
        sources = {"before": str(Path(args.before).resolve()), "after": None}
        times: dict[tuple[str, str], list[float]] = {}
        for _ in range(args.rounds):
            for name in ("before", "after"):
                shutil.rmtree(roots[name] / ".oac", ignore_errors=True)
            for phase in ("cold", "warm"):
                for name in ("before", "after"):
                    took = session(roots[name], sources[name])
                    times.setdefault((name, phase), []).append(took)
                    print(f"{name:<6} {phase}: {took:7.2f} s", flush=True)
        for phase in ("cold", "warm"):
            before, after = min(times[("before", phase)]), min(times[("after", phase)])
            print(f"{args.tests} tests, {phase}: before {before:.2f} s, after {after:.2f} s, "
                  f"before/after = {before / after:.1f}x (best of {args.rounds})")


if __name__ == "__main__":
    main()
