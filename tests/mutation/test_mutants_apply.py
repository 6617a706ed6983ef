"""Every hand mutant still applies: its `old` text occurs exactly once in its file (a stale mutant audits nothing)."""

import importlib.util
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent


def _mutants() -> list:
    spec = importlib.util.spec_from_file_location("oac_mutants", HERE / "mutants.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look the module up by name
    spec.loader.exec_module(module)
    return [(m, module.ROOT / module.SRC / m.file) for m in module.MUTANTS]


@pytest.mark.parametrize(("mutant", "path"), _mutants(), ids=lambda v: getattr(v, "id", ""))
def test_the_mutant_applies_to_exactly_one_place(mutant, path: Path) -> None:
    assert path.is_file(), f"{mutant.id}: {mutant.file} does not exist"
    assert path.read_text(encoding="utf-8").count(mutant.old) == 1, f"{mutant.id}: its old text must occur once"
    assert mutant.old != mutant.new
