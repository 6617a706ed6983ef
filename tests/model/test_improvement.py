"""Promoted snapshots under .oac/promoted/ are applied by register_with_improvements; bad ones are one-line errors."""

import json
from pathlib import Path

import pytest

from open_agent_compiler import (
    AgentDefinition,
    AgentHeader,
    AgentRegistry,
    BashToolPermission,
    ModelParameters,
    SkillDefinition,
    ToolDefinition,
    ToolDefinitionHeader,
    ToolDefinitionLogicBash,
    WorkflowStep,
)
from open_agent_compiler.errors import OacError
from open_agent_compiler.improvement import apply_promoted_to_agent, apply_promoted_to_tool, apply_promoted_to_tree

MODEL = ModelParameters(model_name="m")


def promote(root: Path, name: str, definition: dict, metrics: dict | None = None) -> None:
    path = root / ".oac" / "promoted" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    version = {"component_id": name, "kind": "agent", "content_hash": "x", "definition": definition,
               "metrics": metrics or {}}
    path.write_text(json.dumps({"schema_version": "1", "version": version}))


def tool(name: str) -> ToolDefinition:
    return ToolDefinition(header=ToolDefinitionHeader(name=name, description="plain"),
                          bash_tool=ToolDefinitionLogicBash(permission_bash=BashToolPermission(allowed_commands=["x"])))


def baseline() -> AgentDefinition:
    skill = SkillDefinition(name="triage", description="plain skill",
                            workflow_steps=[WorkflowStep(header="go", tools_used=[tool("lookup")])])
    return AgentDefinition(header=AgentHeader(agent_id="orch", name="orch"), system_prompt="weak prompt",
                           skills=[skill], extra_tools=[tool("send")])


def test_without_promotions_the_definition_is_registered_as_given(tmp_path: Path) -> None:
    reg = AgentRegistry()
    agent_id = reg.register_with_improvements("orch", baseline(), MODEL, project_root=tmp_path)
    assert reg.get_agent(agent_id).agent_definition == baseline()  # type: ignore[union-attr]


def test_promoted_fields_land_on_agent_skill_and_tools(tmp_path: Path) -> None:
    promote(tmp_path, "orch.json", {"system_prompt": "tuned prompt", "todo_mode": "lazy", "subagents": ["ignored"]})
    promote(tmp_path, "triage.json", {"description": "tuned skill"})
    promote(tmp_path, "lookup.json", {"description": "tuned lookup"})
    promote(tmp_path, "send.json", {"rules": ["be brief"]})
    reg = AgentRegistry()
    improved = reg.get_agent(reg.register_with_improvements("orch", baseline(), MODEL, project_root=tmp_path))
    definition = improved.agent_definition  # type: ignore[union-attr]
    assert (definition.system_prompt, definition.todo_mode, definition.subagents) == ("tuned prompt", "lazy", [])
    assert definition.skills[0].description == "tuned skill"
    assert definition.skills[0].workflow_steps[0].tools_used[0].header.description == "tuned lookup"
    assert definition.extra_tools[0].header.rules == ["be brief"]


def test_slots_and_client_buckets_fall_back_in_order(tmp_path: Path) -> None:
    promote(tmp_path, "orch.json", {"system_prompt": "base"})
    promote(tmp_path, "orch__fast.json", {"system_prompt": "base fast"})
    promote(tmp_path, "acme/orch.json", {"system_prompt": "acme"})
    prompt = lambda **kw: apply_promoted_to_tree(baseline(), tmp_path, **kw).system_prompt  # noqa: E731
    assert prompt() == "base"
    assert prompt(model_class="fast") == "base fast"
    assert prompt(model_class="slow") == "base"
    assert prompt(client_id="acme", model_class="fast") == "acme"
    assert prompt(client_id="other", model_class="fast") == "base fast"


def test_branch_promotion_wins_on_a_higher_or_equal_score(tmp_path: Path) -> None:
    promote(tmp_path, "orch.json", {"system_prompt": "own"}, {"pass_rate": 0.8})
    promote(tmp_path, "branch:orch.json", {"system_prompt": "branch"}, {"score_floor": 0.5})
    assert apply_promoted_to_agent(baseline(), "orch", tmp_path).system_prompt == "own"
    promote(tmp_path, "branch:orch.json", {"system_prompt": "branch"}, {"score_floor": 0.8})
    assert apply_promoted_to_agent(baseline(), "orch", tmp_path).system_prompt == "branch"
    assert apply_promoted_to_agent(baseline(), "orch", tmp_path, consider_branch=False).system_prompt == "own"


def test_prompt_sections_become_the_system_prompt(tmp_path: Path) -> None:
    promote(tmp_path, "orch.json", {"prompt_sections": [{"name": "b", "content": "second", "order": 2},
                                                        {"name": "a", "content": "first ", "order": 1}]})
    assert apply_promoted_to_agent(baseline(), None, tmp_path).system_prompt == "first\n\nsecond"


@pytest.mark.parametrize(("content", "reason"), [
    ("{not json", "cannot be read as JSON"),
    (json.dumps({"version": {"component_id": "orch"}}), "no version.definition object"),
])
def test_a_broken_snapshot_is_one_line_naming_the_file(tmp_path: Path, content: str, reason: str) -> None:
    path = tmp_path / ".oac" / "promoted" / "orch.json"
    path.parent.mkdir(parents=True)
    path.write_text(content)
    with pytest.raises(OacError) as exc:
        AgentRegistry().register_with_improvements("orch", baseline(), MODEL, project_root=tmp_path)
    message = str(exc.value)
    assert "\n" not in message and str(path) in message and reason in message


def test_a_promoted_value_is_validated_and_named_with_its_file(tmp_path: Path) -> None:
    promote(tmp_path, "orch.json", {"todo_mode": "sometimes"})
    with pytest.raises(OacError) as exc:
        apply_promoted_to_agent(baseline(), None, tmp_path)
    path = tmp_path / ".oac" / "promoted" / "orch.json"
    assert str(exc.value).startswith(f"promoted snapshot {path}: AgentDefinition.todo_mode: Input should be")
    promote(tmp_path, "send.json", {"rules": "not a list"})
    with pytest.raises(OacError, match=r"send\.json: ToolDefinitionHeader\.rules: Input should be a valid list"):
        apply_promoted_to_tool(baseline().extra_tools[0], None, tmp_path)
