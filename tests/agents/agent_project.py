"""Scratch copies of example projects and a way to run the real `oac test` on them."""

import json
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
OAC = str(Path(sys.executable).with_name("oac"))
SUMMARY = "oac test: discovered={} passed={} failed={} skipped={} not_runnable={}"


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
