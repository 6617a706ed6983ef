"""Generated projects on disk: one copy of the same registry per implementation, each with its own state."""

from __future__ import annotations

import json
import shutil
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/ for `generate`
from generate import Spec, edit_handler, generate, write_spec  # noqa: E402

STATE_DIR = ".oac"
FACTORY = "agents:registry"
CONFIG = "prod"


@dataclass
class Case:
    """One synthetic registry (`spec`), copied byte for byte into a directory per implementation label."""

    name: str
    spec: Spec
    dirs: dict[str, Path] = field(default_factory=dict)

    def results(self, label: str) -> Path:
        return self.dirs[label] / STATE_DIR / "test_results.jsonl"

    def argv(self, label: str, oac: Path, *extra: str, results: Path | None = None) -> list[str]:
        path = results or self.results(label)
        return [str(oac), "test", FACTORY, "--config", CONFIG, "--results", str(path), *extra]

    def reset(self, label: str) -> None:
        """Forget every bit of test state (results history, green state, build output): a cold start."""
        shutil.rmtree(self.dirs[label] / STATE_DIR, ignore_errors=True)

    def results_size(self, label: str, results: Path | None = None) -> int:
        path = results or self.results(label)
        return path.stat().st_size if path.exists() else 0

    def records_after(self, label: str, offset: int, results: Path | None = None) -> list[dict[str, Any]]:
        """Records appended to the results file after byte `offset`."""
        path = results or self.results(label)
        if not path.exists():
            return []
        with path.open("rb") as handle:
            handle.seek(offset)
            return [json.loads(line) for line in handle.read().splitlines() if line.strip()]

    def set_spec(self, spec: Spec) -> None:
        self.spec = spec
        for project in self.dirs.values():
            write_spec(project, spec)

    def edit_handler(self, agent: int, revision: int) -> None:
        for project in self.dirs.values():
            edit_handler(project, agent, revision)


def make_case(work: Path, name: str, spec: Spec, labels: list[str]) -> Case:
    """Generate `spec` once and copy it for every label, so all implementations see identical files."""
    root = work / name
    source = generate(root / "source", spec)
    case = Case(name=name, spec=spec)
    for label in labels:
        target = root / label
        if target.exists():
            shutil.rmtree(target)
        shutil.copytree(source, target)
        case.dirs[label] = target
    return case
