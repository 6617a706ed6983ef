"""The project's own tasks: `doit test` (the test suite), `doit examples`, `doit bench`, `doit fuzz`."""

import sys
from pathlib import Path

DOIT_CONFIG = {"default_tasks": ["test"], "verbosity": 2}
PY = sys.executable
OAC = Path(sys.executable).with_name("oac")  # the oac installed next to the interpreter running doit
OUT = Path(__file__).resolve().parent / "build" / "examples"  # git-ignored


def task_test():
    """run the test suite (pytest; real-harness tests skip with a reason when the CLIs are missing)"""
    return {"actions": [f"{PY} -m pytest -q"], "uptodate": [False]}


def task_examples():
    """run every example's tests (the quickstart also with its scripted model) and compile the multi-agent example
    to all four dialects"""
    actions = [
        f"cd examples/quickstart && {OAC} test agents:registry --config prod -v --results {OUT}/results.jsonl --force",
        f"cd examples/quickstart && {OAC} test agents:registry --config prod -v --invoker scripted "
        f"--results {OUT}/results.jsonl --force",
        f"cd examples/multi_agent && {OAC} test agents:registry --config prod -v --results {OUT}/results.jsonl --force",
        f"cd examples/monitoring && {OAC} test -v --results {OUT}/results.jsonl --force",
    ]
    for dialect in ("opencode", "claude", "pi", "codex"):
        actions.append(
            f"cd examples/multi_agent && {OAC} compile agents:registry --config prod --dialect {dialect} "
            f"--target {OUT}/{dialect}"
        )
    return {"actions": actions, "uptodate": [False]}


def task_bench():
    """run the benchmarks (writes benchmarks/results/*.json and prints the table)"""
    return {"actions": [f"{PY} benchmarks/run.py"], "uptodate": [False]}


def task_fuzz():
    """run the stale-green fuzzer long (OAC_FUZZ_EXAMPLES, default 200 random projects, up to 4 edits each; the
    suite runs 2 derandomized ones and the fixed examples), with hypothesis's count of examples run"""
    import os
    examples = os.environ.get("OAC_FUZZ_EXAMPLES", "200")
    return {"actions": [f"OAC_FUZZ_EXAMPLES={examples} OAC_FUZZ_EDITS=4 OAC_FUZZ_RANDOM=1 "
                        f"{PY} -m pytest -q --hypothesis-show-statistics tests/engine/test_stale_green_fuzz.py"],
            "uptodate": [False]}
