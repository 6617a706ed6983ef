"""Before/after CPU time of one `oac` command, interleaved rep by rep, in one run (a loaded machine inflates both
alike, so the ratio is the figure to quote).

    git archive <before-commit> src | tar -x -C /tmp/before
    python benchmarks/ab_cli.py --before-src /tmp/before/src --reps 7 -- results --results history.jsonl

"before" runs this Python with PYTHONPATH=<before-src> (that checkout's package shadows the installed one),
"after" runs the installed package. Prints the median CPU (user + system) and wall time of each and their ratio.
A warm `oac test` needs `--before-cwd COPY`: a copy of the project warmed by the before code (the judging code's
fingerprint is in every key, so in one folder the two would make each other's runs cold).
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import time

MAIN = "import sys; from open_agent_compiler.cli import main; sys.argv[0] = 'oac'; main()"


def _once(args: list[str], before_src: str | None, cwd: str | None = None) -> tuple[float, float]:
    env = dict(os.environ)
    if before_src:
        env["PYTHONPATH"] = before_src
    start_cpu = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", MAIN, *args], env=env, cwd=cwd, stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE, text=True, check=False)
    wall = time.perf_counter() - start
    end_cpu = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode:
        raise SystemExit(f"oac {' '.join(args)} exited {done.returncode}: {done.stderr[-300:]}")
    cpu = end_cpu.ru_utime + end_cpu.ru_stime - start_cpu.ru_utime - start_cpu.ru_stime
    return cpu, wall


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--before-src", required=True, help="the src/ folder of the checkout to compare against")
    parser.add_argument("--before-cwd", help="run the before code in this folder (default: the current one)")
    parser.add_argument("--reps", type=int, default=7)
    parser.add_argument("args", nargs="+", help="the oac command line, after --")
    options = parser.parse_args()
    runs: dict[str, list[tuple[float, float]]] = {"before": [], "after": []}
    loads = []
    for _ in range(options.reps):
        loads.append(round(os.getloadavg()[0], 1))
        runs["before"].append(_once(options.args, options.before_src, options.before_cwd))
        runs["after"].append(_once(options.args, None))
    cpu = {name: statistics.median(c for c, _ in values) for name, values in runs.items()}
    wall = {name: statistics.median(w for _, w in values) for name, values in runs.items()}
    print(f"oac {' '.join(options.args)}  ({options.reps} reps, 1-minute load average {loads})")
    for name in runs:
        print(f"  {name:<6} median CPU {cpu[name]:.3f} s  wall {wall[name]:.3f} s")
    print(f"  after/before: CPU {cpu['after'] / cpu['before']:.2f}  wall {wall['after'] / wall['before']:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
