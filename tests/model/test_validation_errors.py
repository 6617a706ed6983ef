"""A definition with a misspelled or bad field: one line naming the class, the field and the closest valid name;
exit code 2 at the CLI, no traceback."""

import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner
from pydantic import ValidationError

import open_agent_compiler as oac
from open_agent_compiler.cli import oac as oac_cli
from open_agent_compiler.model.validation_errors import describe_validation_error


def message(build) -> str:  # type: ignore[no-untyped-def]
    with pytest.raises(ValidationError) as exc:
        build()
    line = describe_validation_error(exc.value)
    assert "\n" not in line
    return line


def test_unknown_field_names_class_field_and_suggestion() -> None:
    assert message(lambda: oac.AgentHeader(agent_id="a", name="a", descriptin="x")) == (
        "AgentHeader has no field 'descriptin' (did you mean 'description'?)")
    assert message(lambda: oac.WorkflowStep(header="x", conditon="y")) == (
        "WorkflowStep has no field 'conditon' (did you mean 'condition'?)")


def test_nested_unknown_field_names_the_inner_class_and_where() -> None:
    line = message(lambda: oac.AgentDefinition.model_validate({
        "header": {"agent_id": "a", "name": "a"},
        "extra_tools": [{"header": {"name": "t", "description": "d"}, "mock": {"kind": "fixed", "fixed_outptu": 1}}],
    }))
    assert line == "MockResponse has no field 'fixed_outptu' (did you mean 'fixed_output'?) in extra_tools.0.mock.fixed_outptu"


def test_evaluator_given_as_a_dict_is_named_by_its_kind() -> None:
    line = message(lambda: oac.CapabilityTest(name="x", evaluators=[{"kind": "regex", "patern": "x"}]))
    assert line.startswith("RegexEvaluator has no field 'patern' (did you mean 'pattern'?)")


def test_no_close_name_lists_the_valid_ones() -> None:
    line = message(lambda: oac.TemplateSlot(name="p", default_agent_id="a", zzz=1))
    assert line == "TemplateSlot has no field 'zzz' (valid: also_compile_as_primary, default_agent_id, name)"


def test_other_problems_name_class_and_field() -> None:
    line = message(lambda: oac.AgentDefinition(header=oac.AgentHeader(agent_id="a", name="a"), todo_mode="x"))
    assert line.startswith("AgentDefinition.todo_mode: Input should be 'strict', 'lazy' or 'none'")


def test_cli_prints_one_line_and_exits_2(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "typo_agents.py").write_text(textwrap.dedent("""
        from open_agent_compiler import AgentDefinition, AgentHeader, AgentRegistry

        def registry():
            reg = AgentRegistry()
            reg.register_agent("a", AgentDefinition(header=AgentHeader(agent_id="a", name="a"), sytem_prompt="hi"))
            return reg
    """))
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(oac_cli, ["info", "typo_agents:registry"])
    assert result.exit_code == 2
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and "Traceback" not in result.output
    assert "AgentDefinition has no field 'sytem_prompt' (did you mean 'system_prompt'?)" in lines[0]
    assert "typo_agents:registry" in lines[0]
