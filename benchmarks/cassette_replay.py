"""A replayed agent test through a real harness costs no more than the scripted one (issue 35): the monitoring
example's three-turn test, `oac test --force`, scripted vs replayed from a cassette, interleaved, in one run; the
ratio of medians is the result. `python benchmarks/cassette_replay.py [--harness claude] [--rounds 3]`.

The cassette is recorded first through the loopback proxy from the fake upstream the tests use (127.0.0.1)."""

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "agents"))

from fake_upstream import FakeUpstream  # noqa: E402

OAC = str(Path(sys.executable).with_name("oac"))


def timed(root: Path, *args: str, env: dict[str, str] | None = None) -> float:
    import os

    started = time.perf_counter()
    done = subprocess.run([OAC, "test", "--force", *args], cwd=root, capture_output=True, text=True, timeout=600,
                          env={**os.environ, **(env or {})})
    elapsed = time.perf_counter() - started
    if "passed=1" not in done.stdout:
        raise SystemExit(f"oac test {' '.join(args)} did not pass:\n{done.stdout}{done.stderr}")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--harness", default="claude", choices=["claude", "opencode", "codex"])
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    run = ("--invoker", args.harness, "--dialect", args.harness)
    with tempfile.TemporaryDirectory() as scratch:
        scripted = Path(scratch) / "scripted"
        replayed = Path(scratch) / "replayed"
        for root in (scripted, replayed):
            shutil.copytree(REPO / "examples" / "monitoring", root, ignore=shutil.ignore_patterns(".oac", "__pycache__"))
        (replayed / "agents_scripts.py").unlink()
        with FakeUpstream() as fake:
            timed(replayed, *run, "--record", "all", env={"OAC_RECORD_BASE_URL": fake.base_url})
        times: dict[str, list[float]] = {"scripted": [], "replayed": []}
        for _ in range(args.rounds):  # interleaved: a load change hits both alike
            times["scripted"].append(timed(scripted, *run))
            times["replayed"].append(timed(replayed, *run))
    medians = {name: statistics.median(values) for name, values in times.items()}
    ratio = medians["replayed"] / medians["scripted"]
    print(f"{args.harness}: scripted {medians['scripted']:.2f}s, replayed {medians['replayed']:.2f}s (medians of "
          f"{args.rounds}); replayed/scripted = {ratio:.2f} — {'PASS' if ratio <= 1.15 else 'MISS'} (≤ 1.15)")


if __name__ == "__main__":
    main()
