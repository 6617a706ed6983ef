"""The project's own tasks: `doit test` (the test suite), `doit examples`, `doit bench`."""

import sys

DOIT_CONFIG = {"default_tasks": ["test"], "verbosity": 2}
PY = sys.executable


def task_test():
    """run the test suite (pytest; real-harness tests skip with a reason when the CLIs are missing)"""
    return {"actions": [f"{PY} -m pytest -q"], "uptodate": [False]}


def task_examples():
    """run every example's tests and compile every example to all four dialects"""
    actions = [
        "cd examples/quickstart && oac test agents:registry --config prod -v --results /tmp/oac-examples.jsonl --force",
        "cd examples/multi_agent && oac test agents:registry --config prod -v --results /tmp/oac-examples.jsonl --force",
    ]
    for dialect in ("opencode", "claude", "pi", "codex"):
        actions.append(
            f"cd examples/multi_agent && oac compile agents:registry --config prod --dialect {dialect} "
            f"--target /tmp/oac-examples-build/{dialect}"
        )
    return {"actions": actions, "uptodate": [False]}


def task_bench():
    """run the benchmarks (writes benchmarks/results/*.json and prints the table)"""
    return {"actions": [f"{PY} benchmarks/run.py"], "uptodate": [False]}
