"""A resolved agent's content digest leaves its `tools` out only when they are what its slot and definition
give (then the definition's dump holds every tool); tools given any other way are in the digest."""

import shutil
from pathlib import Path

from open_agent_compiler.compiler.expand import with_primary_twins
from open_agent_compiler.model.factory import load_registry
from open_agent_compiler.model.hashing import digest_model_json
from open_agent_compiler.model.registry import ReachableTool, ResolvedAgent, ResolvedConfig

REPO = Path(__file__).resolve().parents[2]
OPS_DESK = REPO / "tests" / "compat" / "registries" / "ops_desk"


def _ops_desk(tmp_path: Path) -> ResolvedConfig:
    root = tmp_path / "ops_desk"
    shutil.copytree(OPS_DESK, root, ignore=shutil.ignore_patterns(".oac", "__pycache__", "build"))
    return load_registry("agents:registry", str(root)).resolve_config("prod")


def _fresh(agent: ResolvedAgent, **update: object) -> ResolvedAgent:
    """The agent validated anew (no digest cached), with `update` applied."""
    return ResolvedAgent.model_validate({**dict(agent), **update})


def test_resolved_agents_leave_out_their_derived_tools(tmp_path: Path) -> None:
    resolved = with_primary_twins(_ops_desk(tmp_path))
    with_skill_tools = [a for a in resolved.agents if any(" skill " in r.where for r in a.tools)]
    assert with_skill_tools  # ops_desk names a tool in a skill's workflow step
    for agent in resolved.agents:
        assert agent._tools_derived(), agent.slot  # twins too
        assert agent.content_digest() == digest_model_json(agent, exclude={"tools"})


def test_tools_given_otherwise_are_digested(tmp_path: Path) -> None:
    agent = next(a for a in _ops_desk(tmp_path).agents if len(a.tools) >= 2)
    assert _fresh(agent)._tools_derived()
    derived = _fresh(agent).content_digest()
    variants = {
        "one dropped": agent.tools[:-1],
        "reordered": tuple(reversed(agent.tools)),
        "another place": (ReachableTool(tool=agent.tools[0].tool, where="somewhere else"), *agent.tools[1:]),
        "an equal copy": (ReachableTool(tool=agent.tools[0].tool.model_copy(), where=agent.tools[0].where),
                          *agent.tools[1:]),
        "none": (),
    }
    digests = {}
    for what, tools in variants.items():
        other = _fresh(agent, tools=tools)
        assert not other._tools_derived(), what
        assert other.content_digest() == digest_model_json(other), what  # the whole content, tools included
        digests[what] = other.content_digest()
    assert derived not in digests.values()
    assert len({digests[w] for w in ("one dropped", "reordered", "another place", "none")}) == 4


def test_a_tool_edited_in_the_definition_changes_the_digest(tmp_path: Path) -> None:
    agent = next(a for a in _ops_desk(tmp_path).agents if a.definition.extra_tools)
    before = _fresh(agent).content_digest()
    tool = agent.definition.extra_tools[0]
    header = tool.header.model_copy(update={"description": tool.header.description + " (edited)"})
    edited_tool = tool.model_copy(update={"header": header})
    definition = agent.definition.model_copy(
        update={"extra_tools": [edited_tool, *agent.definition.extra_tools[1:]]})
    tools = tuple(ReachableTool(tool=edited_tool, where=r.where) if r.tool is tool else r for r in agent.tools)
    edited = _fresh(agent, definition=definition, tools=tools)
    assert edited._tools_derived()
    assert edited.content_digest() != before


def test_a_tool_named_twice_is_kept_once_at_its_first_place(tmp_path: Path) -> None:
    root = tmp_path / "ops_desk"
    shutil.copytree(OPS_DESK, root, ignore=shutil.ignore_patterns(".oac", "__pycache__", "build"))
    registry = load_registry("agents:registry", str(root))
    registry_id, registered = next((rid, r) for rid, r in registry._agents.items() if r.definition.skills)
    skill_tool = registered.definition.skills[0].workflow_steps[0].tools_used[0]
    again = skill_tool.model_copy()  # an equal tool, a second object: also named in extra_tools, after the others
    definition = registered.definition.model_copy(
        update={"extra_tools": [*registered.definition.extra_tools, again]})
    registry._agents[registry_id] = registered.model_copy(update={"definition": definition})
    agent = next(a for a in registry.resolve_config("prod").agents if a.definition is definition)
    names = [r.tool.name for r in agent.tools]
    assert names == [t.name for t in definition.extra_tools]  # once each, in order; the skill's place dropped
    assert agent.tools[-1].tool is again and agent.tools[-1].where.endswith("extra_tools")
    assert agent._tools_derived()
