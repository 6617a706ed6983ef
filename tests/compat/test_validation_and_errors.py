"""Validation and exception types as a 1.16.5 user meets them: what is refused, what is accepted, and that the
errors it raises as ValueError are still caught by `except ValueError`."""

from pathlib import Path

import pytest
from pydantic import ValidationError

from open_agent_compiler import (
    AgentDefinition,
    AgentHeader,
    AgentRegistry,
    AgentTest,
    CompilationConfig,
    MockResponse,
    ModelParameters,
    ScriptDefinition,
    TemplateSlot,
    TemplateTree,
    Turn,
)
from open_agent_compiler.compiler.script import CompileScript
from open_agent_compiler.model.core.access_profile import AccessProfile, AccessProfileRegistry
from open_agent_compiler.model.core.model_preset import ModelPreset
from open_agent_compiler.model.core.split_profile import SplitProfile


def agent(name: str) -> AgentDefinition:
    return AgentDefinition(header=AgentHeader(agent_id=name, name=name, description="d"),
                           usage_explanation_long="l", usage_explanation_short="s", system_prompt="Say hi.")


def registry() -> AgentRegistry:
    reg = AgentRegistry()
    agent_id = reg.register_agent("greeter", agent("greeter"), ModelParameters(model_name="anthropic/claude-x"))
    reg.register_template(TemplateTree(name="tpl", slots=[TemplateSlot(name="primary", default_agent_id=agent_id)]))
    reg.create_compilation_config(CompilationConfig(name="prod", template_name="tpl"))
    return reg


def test_a_fixed_mock_needs_its_output() -> None:
    for given in ({}, {"fixed_output": None}):
        with pytest.raises(ValidationError, match="'fixed' mock needs a fixed_output"):
            MockResponse(kind="fixed", **given)
    assert MockResponse(kind="fixed", fixed_output={}).fixed_output == {}
    assert MockResponse(kind="fixed", fixed_output=0).fixed_output == 0


def test_a_callable_mock_needs_a_module_function_spec() -> None:
    for spec in (None, "no_colon", "module:", ":function"):
        with pytest.raises(ValidationError, match="module:function"):
            MockResponse(kind="callable", callable_spec=spec)
    assert MockResponse(kind="callable", callable_spec="mocks:answer").callable_spec == "mocks:answer"


def test_an_absolute_missing_source_is_refused(tmp_path: Path) -> None:
    missing = tmp_path / "gone.py"
    with pytest.raises(ValidationError, match="does not exist"):
        ScriptDefinition(target_file_path="scripts/x.py", source_file_path=missing)
    (tmp_path / "here.py").write_text("print(1)\n")
    assert ScriptDefinition(target_file_path="scripts/x.py", source_file_path=tmp_path / "here.py").source_file_path
    # relative paths are found from the source root at compile time; inline contents need no source file
    assert ScriptDefinition(target_file_path="scripts/x.py", source_file_path="tools/x.py").source_file_path
    assert ScriptDefinition(target_file_path="scripts/x.py", source_file_path=missing, script_contents="pass")


def test_agent_test_needs_exactly_one_of_prompt_and_turns() -> None:
    with pytest.raises(ValidationError, match="exactly one of prompt or turns"):
        AgentTest(name="t")
    with pytest.raises(ValidationError, match="exactly one of prompt or turns"):
        AgentTest(name="t", prompt="p", turns=(Turn(prompt="a"),))
    assert AgentTest(name="t", prompt="p").prompt == "p"
    assert AgentTest(name="t", turns=(Turn(prompt="a"),)).is_multi_turn


def test_split_profile_access_profile_and_preset_refusals() -> None:
    preset = ModelPreset(name="p", provider="anthropic", model_id="claude-x")
    with pytest.raises(ValidationError, match="class_map"):
        SplitProfile(name="s", preset=preset, class_map={})
    profiles = AccessProfileRegistry()
    with pytest.raises(ValueError, match="'nope'"):
        profiles.register(AccessProfile(name="child", extends="nope"))
    reg = AgentRegistry()
    reg.register_agent_with_preset("a", agent("a"), preset)
    reg.register_agent_with_preset("b", agent("b"), preset)  # the same preset again: fine
    with pytest.raises(ValueError, match="'p' is already registered with different settings"):
        reg.register_agent_with_preset("c", agent("c"), preset.model_copy(update={"model_id": "other"}))


def test_errors_raised_as_value_error_there_are_value_errors_here(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="exactly one of factory"):
        CompileScript(target=tmp_path, config="prod")
    with pytest.raises(ValueError, match="exactly one of factory"):
        CompileScript(target=tmp_path, config="prod", factory=registry, factory_spec="agents:registry")
    with pytest.raises(ValueError, match="unknown dialect 'nope'"):
        CompileScript(target=tmp_path, config="prod", factory=registry, dialect="nope")
    with pytest.raises(ValueError, match="must look like 'module:callable'"):
        CompileScript(target=tmp_path / "b", config="prod", factory_spec="nocolon").run()
    with pytest.raises(ValueError, match="unknown compilation config 'nope'"):
        CompileScript(target=tmp_path / "b", config="nope", factory=registry).run()
    reg = registry()
    with pytest.raises(ValueError, match="already registered"):
        reg.register_template(TemplateTree(name="tpl", slots=[TemplateSlot(name="primary", default_agent_id="x")]))


def test_compile_script_helpers_dry_run_and_mock_profile(tmp_path: Path) -> None:
    script = CompileScript(target=tmp_path / "build", config="prod", factory=registry)
    assert isinstance(script.resolve_factory()(), AgentRegistry)
    assert isinstance(CompileScript(target=tmp_path, config="prod", factory=registry()).resolve_factory()(),
                      AgentRegistry)
    assert script.effective_clean_strategy() == "none"
    assert CompileScript(target=tmp_path, config="prod", factory=registry, clean=True).effective_clean_strategy() == "full"
    assert CompileScript(target=tmp_path, config="prod", factory=registry, clean=True,
                         clean_strategy="per_variant").effective_clean_strategy() == "per_variant"
    dry = CompileScript(target=tmp_path / "dry", config="prod", factory=registry, dry_run=True).run()
    assert dry.dry_run and dry.written_files == [] and dry.planned_files and not (tmp_path / "dry").exists()
    real = CompileScript(target=tmp_path / "real", config="prod", factory=registry, mock_profile="ci").run()
    assert [path.name for path in real.written_files] == ["primary.md"]
    assert any("mock profile 'ci' is not registered" in warning for warning in real.warnings)
