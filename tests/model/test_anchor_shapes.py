"""Definitions written the public package's way mean the same here: positional permissions, Path script paths,
None texts, skill examples, single-turn tests, prompt sections, tool formats."""

from pathlib import Path

import pytest
from pydantic import ValidationError

from open_agent_compiler import (
    AgentDefinition,
    AgentHeader,
    AgentTest,
    BashToolPermission,
    JsonToolPermission,
    MockProfile,
    ScriptDefinition,
    SkillExample,
    SubstringEvaluator,
    ToolDefinition,
    ToolDefinitionHeader,
    ToolDefinitionLogicBash,
    ToolDefinitionLogicJson,
    ToolScriptDefinition,
    WorkflowStep,
)


def test_permissions_construct_positionally_in_field_order() -> None:
    bash = BashToolPermission("bash", "bash", "ask", ["git status"])
    assert (bash.tool_name, bash.scope, bash.value, bash.allowed_commands) == ("bash", "bash", "ask", ["git status"])
    assert JsonToolPermission("custom_tool").scope == "custom_tool"
    with pytest.raises(ValidationError, match="scope"):
        BashToolPermission("bash", "custom_tool")
    with pytest.raises(TypeError, match="two values for 'value'"):
        BashToolPermission("bash", "bash", "allow", value="deny")
    with pytest.raises(TypeError, match="at most 4 positional"):
        BashToolPermission("bash", "bash", "allow", [], "extra")


def test_script_paths_accept_path_objects_and_imply_the_type() -> None:
    script = ScriptDefinition(target_file_path=Path("scripts/x.ts"), source_file_path=Path("src/x.ts"),
                              source_file_type=None, script_contents=None)
    assert (script.target_file_path, script.source_file_path, script.source_file_type) == (
        "scripts/x.ts", "src/x.ts", "typescript")
    with pytest.raises(ValidationError, match="does not match its '.py' suffix"):
        ScriptDefinition(target_file_path="a.py", source_file_type="javascript", script_contents="x")
    with pytest.raises(ValidationError, match="needs script_contents or source_file_path"):
        ScriptDefinition(target_file_path="a.py")
    both = ScriptDefinition(target_file_path="a.py", source_file_path="s.py", script_contents="print(1)")
    assert both.script_contents == "print(1)"  # inline contents win, as there
    group = ToolScriptDefinition(paths=[Path("scripts/a.py")], scripts=None)
    assert (group.paths, group.scripts) == (["scripts/a.py"], [])


def test_none_texts_read_as_empty() -> None:
    assert MockProfile(name="ci", description=None).description == ""
    assert MockProfile(name="ci").resolve("missing") is None
    step = WorkflowStep(header=None, condition=None, result=None, rule=None, tools_used=[])
    assert (step.header, step.rule, step.condition) == ("", "", None)


def test_skill_examples_render_as_one_line() -> None:
    tool = ToolDefinition(header=ToolDefinitionHeader(name="lookup", description="d"),
                          bash_tool=ToolDefinitionLogicBash(permission_bash=BashToolPermission(allowed_commands=["x"])))
    example = SkillExample(header="Order status", condition="the user gives an id", result="the status",
                           rule="one call", tools_used=[tool])
    assert str(example) == "Order status when the user gives an id → the status (one call) [tools: lookup]"


def test_a_single_turn_test_carries_its_evaluators_on_its_turn() -> None:
    evaluator = SubstringEvaluator(needle="ok")
    test = AgentTest(name="t", prompt="hi", expected_tool_calls=("x",), evaluators=(evaluator,))
    assert not test.is_multi_turn
    (turn,) = test.all_turns()
    assert (turn.prompt, turn.expected_tool_calls, turn.evaluators) == ("hi", ("x",), (evaluator,))
    assert test.conversation()[0].evaluators == ()  # ours applies them once, to the whole conversation


def test_prompt_sections_make_the_system_prompt() -> None:
    agent = AgentDefinition(header=AgentHeader(agent_id="a", name="a"), system_prompt="ignored", prompt_sections=[
        {"name": "rules", "content": "Be brief.", "order": 2}, {"name": "role", "content": " You triage. ", "order": 1},
        {"name": "empty", "content": "  "},
    ])
    assert agent.system_prompt == "You triage.\n\nBe brief."


def test_chosen_tool_format_follows_override_then_default_then_what_the_tool_has() -> None:
    bash_only = ToolDefinition(header=ToolDefinitionHeader(name="b", description="d"),
                               bash_tool=ToolDefinitionLogicBash(permission_bash=BashToolPermission()))
    both = bash_only.model_copy(update={"header": ToolDefinitionHeader(name="j", description="d"),
                                        "json_tool": ToolDefinitionLogicJson(permission_json=JsonToolPermission())})
    agent = AgentDefinition(header=AgentHeader(agent_id="a", name="a"), default_tool_format="json",
                            tool_format_overrides={"j": "both"})
    assert agent.chosen_format(bash_only) == "bash"
    assert agent.chosen_format(both) == "both"
    assert agent.model_copy(update={"tool_format_overrides": {}}).chosen_format(both) == "json"


def test_split_profile_routes_presets_by_model_class() -> None:
    from open_agent_compiler import AgentVariant, ModelPreset, ModelParameters, SplitProfile, apply_variant

    fast = ModelPreset(name="fast", provider="zai", model_id="glm-4.5-air")
    deep = ModelPreset(name="deep", provider="zai", model_id="glm-5.1", reasoning=True)
    split = SplitProfile(name="split", postfix="-split", preset=deep, class_map={"fast": fast, "analytical": deep},
                         default_class="analytical")

    def variant(model_class: str) -> AgentVariant:
        return AgentVariant(agent_definition=AgentDefinition(header=AgentHeader(agent_id="a", name="a"),
                                                             model_class=model_class),
                            model_parameters=ModelParameters(model_name="own/model"))

    assert split.preset_for(variant("fast")) == fast and split.preset_for(variant("other")) == deep
    moved = apply_variant(split, variant("fast"))
    assert (moved.postfix, moved.model_parameters.model_name) == ("-split", "zai/glm-4.5-air")  # type: ignore[union-attr]
    assert apply_variant(split, variant("vision")) == variant("vision")  # passthrough keeps its own model
    with pytest.raises(ValidationError, match="at least one class_map entry"):
        SplitProfile(name="s", preset=deep)
