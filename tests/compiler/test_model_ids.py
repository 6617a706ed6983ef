"""Model ids, reasoning effort and temperature in each harness's own form; what cannot be right is left out
and reported as a compile warning (and printed by `oac compile`)."""

from pathlib import Path

import pytest
from click.testing import CliRunner
from oac_builders import agent

from open_agent_compiler.compiler.dialects import DIALECTS
from open_agent_compiler.model.core.agent import ModelParameters
from open_agent_compiler.model.core.template import CompilationConfig, TemplateSlot, TemplateTree
from open_agent_compiler.model.registry import AgentRegistry, ResolvedConfig
from open_agent_compiler.testing.artifacts import load_agent_artifact



def resolved(parameters: ModelParameters) -> ResolvedConfig:
    reg = AgentRegistry()
    reg.register_agent("a", agent("a"), parameters)
    reg.register_template(TemplateTree(name="t", slots=[TemplateSlot(name="primary", default_agent_id="a")]))
    reg.create_compilation_config(CompilationConfig(name="c", template_name="t"))
    return reg.resolve_config("c")


def compiled(dialect: str, parameters: ModelParameters, tmp_path: Path) -> tuple[dict, tuple[str, ...]]:
    from open_agent_compiler.compiler.writer import write_output

    output = DIALECTS[dialect].compile(resolved(parameters))
    write_output(output, tmp_path, dialect=dialect)
    return load_agent_artifact(tmp_path, "primary", dialect).config, output.warnings


# model name → what each harness gets (None: left out, with a warning)
CASES = {
    "anthropic/claude-sonnet-4-5": {"opencode": "anthropic/claude-sonnet-4-5", "claude": "claude-sonnet-4-5",
                                    "codex": None, "pi": "anthropic/claude-sonnet-4-5"},
    "openai/gpt-5.1-codex": {"opencode": "openai/gpt-5.1-codex", "claude": None, "codex": "gpt-5.1-codex",
                             "pi": "openai/gpt-5.1-codex"},
    "gpt-5": {"opencode": "openai/gpt-5", "claude": None, "codex": "gpt-5", "pi": "openai/gpt-5"},
    "sonnet": {"opencode": None, "claude": "sonnet", "codex": None, "pi": None},
    "zai-coding-plan/glm-4.5-air": {"opencode": "zai-coding-plan/glm-4.5-air", "claude": None, "codex": None,
                                    "pi": "zai-coding-plan/glm-4.5-air"},
}


@pytest.mark.parametrize("dialect", sorted(DIALECTS))
@pytest.mark.parametrize("name", sorted(CASES))
def test_model_id_in_the_harness_form(dialect: str, name: str, tmp_path: Path) -> None:
    config, warnings = compiled(dialect, ModelParameters(model_name=name), tmp_path)
    expected = CASES[name][dialect]
    assert config.get("model") == expected
    model_warnings = [w for w in warnings if "model" in w and name in w]
    if expected is None:
        assert len(model_warnings) == 1 and model_warnings[0].startswith(f"{dialect}: agent 'primary': ")
    else:
        assert model_warnings == []


EFFORT_KEY = {"claude": "effort", "codex": "model_reasoning_effort", "pi": "thinking"}


@pytest.mark.parametrize("dialect", sorted(DIALECTS))
def test_reasoning_effort_and_temperature(dialect: str, tmp_path: Path) -> None:
    parameters = ModelParameters(model_name="anthropic/claude-sonnet-4-5", temperature=0.3, reasoning_effort="high")
    config, warnings = compiled(dialect, parameters, tmp_path)
    if dialect == "opencode":
        assert config["temperature"] == 0.3
        assert [w for w in warnings if "reasoning effort 'high'" in w]
        # written: no warning that it was left out (only the line saying 1.16.5 leaves it out)
        assert [w for w in warnings if "temperature" in w and "1.16.5" not in w] == []
    else:
        assert config[EFFORT_KEY[dialect]] == "high" and "temperature" not in config
        assert [w for w in warnings if "temperature 0.3" in w]


def test_effort_names_map_per_harness(tmp_path: Path) -> None:
    parameters = ModelParameters(model_name="openai/gpt-5", reasoning_effort="minimal")
    assert compiled("claude", parameters, tmp_path / "c")[0]["effort"] == "low"
    assert compiled("codex", parameters, tmp_path / "x")[0]["model_reasoning_effort"] == "minimal"
    assert compiled("pi", parameters, tmp_path / "p")[0]["thinking"] == "minimal"


def test_no_model_no_warning(tmp_path: Path) -> None:
    for dialect in DIALECTS:
        output = DIALECTS[dialect].compile(resolved(ModelParameters(model_name="openai/gpt-5")))
        # (Pi's one line on its tool lists, unlike 1.16.5's, is not about the model)
        assert dialect == "claude" or [w for w in output.warnings if not w.startswith("pi: unlike")] == []


def test_oac_compile_prints_the_warnings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from open_agent_compiler.cli.compile_cmd import compile_command

    (tmp_path / "reg.py").write_text(
        "from open_agent_compiler.model.core.agent import AgentDefinition, AgentHeader, ModelParameters\n"
        "from open_agent_compiler.model.core.template import CompilationConfig, TemplateSlot, TemplateTree\n"
        "from open_agent_compiler.model.registry import AgentRegistry\n"
        "def registry():\n"
        "    reg = AgentRegistry()\n"
        "    reg.register_agent('a', AgentDefinition(header=AgentHeader(agent_id='a', name='a', description='d')),\n"
        "                       ModelParameters(model_name='openai/gpt-5'))\n"
        "    reg.register_template(TemplateTree(name='t', slots=[TemplateSlot(name='primary', default_agent_id='a')]))\n"
        "    reg.create_compilation_config(CompilationConfig(name='prod', template_name='t'))\n"
        "    return reg\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    result = CliRunner().invoke(compile_command, ["reg:registry", "--config", "prod", "--target", "out",
                                                  "--dialect", "claude", "--dialect", "codex"])
    assert result.exit_code == 0, result.output
    assert "warning: claude: agent 'primary': model 'openai/gpt-5' is not a Claude model" in result.stderr
    assert "warning: codex" not in result.stderr
