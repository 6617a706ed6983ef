"""`oac test` compiles in memory without warnings (it reads the files only): everything else is the same."""

import shutil
from pathlib import Path

import pytest

from open_agent_compiler.compiler.dialects import DIALECTS, get_dialect
from open_agent_compiler.model.factory import load_registry

OPS_DESK = Path(__file__).resolve().parents[1] / "compat" / "registries" / "ops_desk"


@pytest.mark.parametrize("dialect", sorted(DIALECTS))
def test_without_warnings_only_the_warnings_are_left_out(tmp_path: Path, dialect: str) -> None:
    root = tmp_path / "ops_desk"
    shutil.copytree(OPS_DESK, root, ignore=shutil.ignore_patterns(".oac", "__pycache__", "build"))
    resolved = load_registry("agents:registry", str(root)).resolve_config("prod")
    full = get_dialect(dialect).compile(resolved, source_root=root)
    files_only = get_dialect(dialect).compile(resolved, source_root=root, with_warnings=False)
    assert files_only.warnings == ()
    assert files_only.model_copy(update={"warnings": full.warnings}) == full  # files, settings, blocks
