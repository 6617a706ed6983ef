"""`ResolvedConfig.tools()` is found once per config object; a copy with other agents finds its own."""

import shutil
from pathlib import Path

from open_agent_compiler.model.factory import load_registry
from open_agent_compiler.model.registry import ResolvedConfig

OPS_DESK = Path(__file__).resolve().parents[2] / "tests" / "compat" / "registries" / "ops_desk"


def _ops_desk(tmp_path: Path) -> ResolvedConfig:
    root = tmp_path / "ops_desk"
    shutil.copytree(OPS_DESK, root, ignore=shutil.ignore_patterns(".oac", "__pycache__", "build"))
    return load_registry("agents:registry", str(root)).resolve_config("prod")


def _walked(resolved: ResolvedConfig) -> list[tuple[str, str]]:
    """What `tools()` means: every reachable tool's first place, by name, in agent order."""
    seen: dict[str, str] = {}
    for agent in resolved.agents:
        for reachable in agent.tools:
            seen.setdefault(reachable.tool.name, reachable.where)
    return list(seen.items())


def test_tools_are_the_first_place_of_each_name_and_each_call_gets_its_own_list(tmp_path: Path) -> None:
    resolved = _ops_desk(tmp_path)
    first = resolved.tools()
    assert [(r.tool.name, r.where) for r in first] == _walked(resolved)
    first.clear()  # a caller's list is its own
    again = resolved.tools()
    assert [(r.tool.name, r.where) for r in again] == _walked(resolved)


def test_a_copy_with_other_agents_does_not_serve_the_first_answer(tmp_path: Path) -> None:
    resolved = _ops_desk(tmp_path)
    assert len(resolved.tools()) > 1  # cached on `resolved`; model_copy copies private attributes
    smallest = min(resolved.agents, key=lambda agent: len({r.tool.name for r in agent.tools}))
    fewer = resolved.model_copy(update={"agents": (smallest,)})
    assert [(r.tool.name, r.where) for r in fewer.tools()] == _walked(fewer)
    assert len(fewer.tools()) < len(resolved.tools())


def test_reachable_tools_are_what_validation_gives(tmp_path: Path) -> None:
    """`resolve_config` builds each ReachableTool without validating it again: equal to the validated one, with
    the same tool object and fields set."""
    from open_agent_compiler.model.registry import ReachableTool

    resolved = _ops_desk(tmp_path)
    for agent in resolved.agents:
        for reachable in agent.tools:
            validated = ReachableTool(tool=reachable.tool, where=reachable.where)
            assert reachable == validated and reachable.tool is validated.tool
            assert reachable.model_fields_set == validated.model_fields_set == {"tool", "where"}
            assert reachable.model_dump() == validated.model_dump()


def test_resolved_agents_are_what_validation_gives(tmp_path: Path) -> None:
    """`resolve_config` builds each ResolvedAgent without validating it again: equal to the validated one (fields,
    fields set, private attributes, dump, digest), its definition and model the same objects."""
    from open_agent_compiler.model.registry import ResolvedAgent

    resolved = _ops_desk(tmp_path)
    for agent in resolved.agents:
        validated = ResolvedAgent(**{field: getattr(agent, field) for field in ResolvedAgent.model_fields})
        assert agent == validated and agent.__dict__ == validated.__dict__
        assert list(agent.__dict__) == list(validated.__dict__)  # field order
        assert agent.model_fields_set == validated.model_fields_set
        assert agent.__pydantic_private__ == validated.__pydantic_private__ == {"_digest": None, "_grants": None}
        assert agent.definition is validated.definition and agent.model_parameters is validated.model_parameters
        assert agent.model_dump() == validated.model_dump()
        assert agent.content_digest() == validated.content_digest()
