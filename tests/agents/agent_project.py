"""Scratch copies of example projects and a way to run the real `oac test` on them."""

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
OAC = str(Path(sys.executable).with_name("oac"))
SUMMARY = "oac test: discovered={} passed={} failed={} skipped={} not_runnable={}"


def harness_or_skip(name: str) -> None:
    """Skip with the reason when harness `name` is not installed (.ci/install-harnesses); under CI that is a
    failure with the reason instead, as in tests/harness: CI is never green without the real harnesses."""
    from open_agent_compiler.testing.invokers.harness.base import harness_dir

    try:
        entry = json.loads((harness_dir() / "status.json").read_text())["harnesses"][name]
        why = None if entry.get("available") and Path(entry.get("bin", "")).exists() else \
            f"{name}: {entry.get('reason', 'binary missing')}"
    except (OSError, ValueError, KeyError):
        why = f"{name}: no entry in {harness_dir()}/status.json: run .ci/install-harnesses"
    if why is None:
        return
    if os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no", "off"):
        pytest.fail(f"CI is set, so a harness test may not be skipped: {why}")
    pytest.skip(why)


class Project:
    def __init__(self, root: Path) -> None:
        self.root = root

    def write(self, name: str, text: str) -> None:
        (self.root / name).write_text(text)

    def oac(self, *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
        return subprocess.run([OAC, *args], cwd=self.root, capture_output=True, text=True, timeout=timeout)

    def records(self) -> list[dict]:
        path = self.root / ".oac" / "test_results.jsonl"
        return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


@pytest.fixture
def example(tmp_path: Path) -> Callable[[str], Project]:
    def copy(name: str) -> Project:
        target = tmp_path / name
        shutil.copytree(REPO / "examples" / name, target, ignore=shutil.ignore_patterns(".oac", "__pycache__"))
        return Project(target)
    return copy


def summary(stdout: str) -> str:
    return [line for line in stdout.splitlines() if line.startswith("oac test:")][-1]
