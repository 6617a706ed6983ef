"""The render memo changes how fast a compile is, never what it gives: a compile through an empty memo (every
agent rendered and remembered), through a full one (every agent served from it) and without a memo give the same
files byte for byte, the same warnings and the same fragments, on the generated benchmark registry and on a
registry that uses every feature (subagents, twins, skills, MCP servers, workflows). After an edit, a memo filled
before the edit serves no old bytes."""

import json
import shutil
import sys
from pathlib import Path

import pytest

from open_agent_compiler.compiler.dialects import DIALECTS, get_dialect
from open_agent_compiler.compiler.output import CompiledOutput
from open_agent_compiler.compiler.render_memo import RenderMemo
from open_agent_compiler.model.factory import load_registry
from open_agent_compiler.model.registry import ResolvedConfig

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "benchmarks"))
from generate import Spec, generate  # noqa: E402

OPS_DESK = REPO / "tests" / "compat" / "registries" / "ops_desk"


def _resolved(root: Path) -> ResolvedConfig:
    """A fresh load each time: no digest cached on the agents from an earlier compile."""
    return load_registry("agents:registry", str(root)).resolve_config("prod")


def _assert_same(left: CompiledOutput, right: CompiledOutput) -> None:
    assert [file.path for file in left.files] == [file.path for file in right.files]
    for mine, theirs in zip(left.files, right.files, strict=True):
        assert mine.content == theirs.content, mine.path  # every byte
        assert mine.private == theirs.private, mine.path
    assert left == right  # warnings, settings fragments, managed blocks too


def _three_ways(root: Path, dialect: str) -> tuple[CompiledOutput, RenderMemo]:
    spec = get_dialect(dialect)
    plain = spec.compile(_resolved(root), source_root=root)
    filling = RenderMemo()
    missed = spec.compile(_resolved(root), source_root=root, memo=filling)
    agents = sum(file.path.startswith(spec.agents_dir + "/") for file in plain.files)
    assert filling.added == len(filling.entries) == agents  # every agent rendered once and remembered
    full = RenderMemo(filling.live_entries())
    served = spec.compile(_resolved(root), source_root=root, memo=full)
    assert full.added == 0 and len(full.used) == agents  # every agent served from the memo
    _assert_same(plain, missed)
    _assert_same(plain, served)
    return plain, full


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return generate(tmp_path_factory.mktemp("memo") / "generated", Spec(agents=60, handler_every=7))


@pytest.mark.parametrize("dialect", sorted(DIALECTS))
def test_generated_registry_compiles_to_the_same_bytes_with_and_without_the_memo(generated: Path,
                                                                                 dialect: str) -> None:
    _three_ways(generated, dialect)


@pytest.mark.parametrize("dialect", sorted(DIALECTS))
def test_every_feature_compiles_to_the_same_bytes_with_and_without_the_memo(tmp_path: Path, dialect: str) -> None:
    root = tmp_path / "ops_desk"
    shutil.copytree(OPS_DESK, root, ignore=shutil.ignore_patterns(".oac", "__pycache__", "build"))
    plain, _ = _three_ways(root, dialect)
    assert any(path.endswith("reviewer-primary" + get_dialect(dialect).agent_suffix)
               for path in plain.file_map())  # twins went through the memo too


@pytest.fixture(scope="module")
def edited(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The generated registry with agent 3's prompt and tools edited (its own folder: a fresh import)."""
    return generate(tmp_path_factory.mktemp("memo") / "edited", Spec(agents=60, handler_every=7).with_edit(3, 1))


@pytest.mark.parametrize("dialect", sorted(DIALECTS))
def test_a_memo_filled_before_an_edit_serves_no_old_bytes(generated: Path, edited: Path, dialect: str) -> None:
    before, memo = _three_ways(generated, dialect)
    spec = get_dialect(dialect)
    fresh = spec.compile(_resolved(edited), source_root=edited)
    old = RenderMemo(memo.live_entries())
    served = spec.compile(_resolved(edited), source_root=edited, memo=old)
    _assert_same(fresh, served)
    assert spec.agent_path("agent-3") in {path for path, data in fresh.file_map().items()
                                          if before.file_map().get(path) != data}
    assert 1 <= old.added < len(old.used)  # agent 3 rendered afresh, most agents served from the old memo


def test_one_memo_shared_by_every_dialect_serves_each_its_own_bytes(generated: Path) -> None:
    memo = RenderMemo()
    for dialect in sorted(DIALECTS):  # each dialect's agents are keyed apart (a key without the dialect mixes them)
        spec = get_dialect(dialect)
        _assert_same(spec.compile(_resolved(generated), source_root=generated),
                     spec.compile(_resolved(generated), source_root=generated, memo=memo))
