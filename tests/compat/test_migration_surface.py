"""Smaller parts of 1.16.5's surface a migrating team uses (issue 34, item 5): `oac compile --native-tools` is
accepted and says it changes nothing; 1.16.5's module path `compiler.dialects.opencode` imports; a dispatcher
that references a subagent with mode="primary" is told to delegate with the harness's subagent tool, never to run
a helper script that is neither shipped nor allowed."""

import importlib
import subprocess
import sys
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from open_agent_compiler.cli import oac
from open_agent_compiler.compiler.dialects import DIALECTS, get_dialect
from open_agent_compiler.model.core.agent_model import (
    AgentDefinition, AgentHeader, CompilationConfig, ModelParameters, TemplateSlot, TemplateTree, ToolPermissions,
)
from open_agent_compiler.model.core.agent_registry import AgentRegistry

REGISTRY = '''
from open_agent_compiler.model.core.agent_model import AgentDefinition, AgentHeader, CompilationConfig
from open_agent_compiler.model.core.agent_model import ModelParameters, TemplateSlot, TemplateTree
from open_agent_compiler.model.core.agent_registry import AgentRegistry

def registry():
    reg = AgentRegistry()
    agent = AgentDefinition(header=AgentHeader(agent_id="a", name="a", description="An agent."),
                            usage_explanation_long="a", usage_explanation_short="a", system_prompt="Help.")
    agent_id = reg.register_agent("a", agent, ModelParameters(model_name="anthropic/claude-sonnet-4-5"))
    reg.register_template(TemplateTree(name="t", slots=[TemplateSlot(name="primary", default_agent_id=agent_id)]))
    reg.create_compilation_config(CompilationConfig(name="default", template_name="t"))
    return reg
'''


def test_native_tools_is_accepted_and_says_it_changes_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "agents.py").write_text(REGISTRY)
    monkeypatch.chdir(tmp_path)
    runner = CliRunner()
    plain = runner.invoke(oac, ["compile", "agents:registry", "--config", "default", "--target", "plain"])
    native = runner.invoke(oac, ["compile", "agents:registry", "--config", "default", "--target", "native",
                                 "--native-tools"])
    assert plain.exit_code == 0 and native.exit_code == 0, native.output
    assert "--native-tools changes nothing: unlike open-agent-compiler 1.16.5" in native.output
    assert "--native-tools" not in plain.output
    files = {p.relative_to(tmp_path / "plain"): p.read_bytes() for p in (tmp_path / "plain").rglob("*")
             if p.is_file() and ".oac" not in p.parts}
    assert files and {p: (tmp_path / "native" / p).read_bytes() for p in files} == files


def test_the_public_module_path_of_the_opencode_dialect_imports() -> None:
    module = importlib.import_module("open_agent_compiler.compiler.dialects.opencode")
    assert module.OPENCODE is get_dialect("opencode")


def header(name: str, **extra: str) -> AgentHeader:
    return AgentHeader(agent_id=name, name=name, description=f"{name} does its part.", **extra)


@pytest.mark.parametrize("dialect", list(DIALECTS))
def test_a_primary_mode_dispatcher_is_told_to_delegate_not_to_run_a_script(dialect: str) -> None:
    reg = AgentRegistry()
    model = ModelParameters(model_name="anthropic/claude-sonnet-4-5")
    worker = AgentDefinition(header=header("worker"), usage_explanation_long="w", usage_explanation_short="w",
                             system_prompt="Do the work.")
    boss = AgentDefinition(header=header("boss"), usage_explanation_long="b", usage_explanation_short="b",
                           system_prompt="Hand the work on.", subagents=[header("worker", mode="primary")],
                           tool_permissions=ToolPermissions(read=True))
    slots = [TemplateSlot(name="primary", default_agent_id=reg.register_agent("boss", boss, model)),
             TemplateSlot(name="worker", default_agent_id=reg.register_agent("worker", worker, model))]
    reg.register_template(TemplateTree(name="t", slots=slots))
    reg.create_compilation_config(CompilationConfig(name="default", template_name="t"))
    output = get_dialect(dialect).compile(reg.resolve_config("default"))
    body = next(f.content.decode() for f in output.files if re.search(r"agents/primary\.(md|toml)$", f.path))
    assert "worker" in body
    assert not re.search(r"opencode_manager|\bscripts/|\.py\b|uv run|python3? ", body), body
    assert any("mode 'primary'" in warning for warning in output.warnings)


ARTIFACT_ERRORS = """
import sys
from open_agent_compiler.testing.artifacts import load_agent_artifact
for dialect in ("opencode", "no-such-dialect"):
    try:
        load_agent_artifact(sys.argv[1], "ghost", dialect=dialect)
    except FileNotFoundError as exc:
        print("FileNotFoundError", sys.argv[1] in str(exc))
    except ValueError as exc:
        print("ValueError", "no-such-dialect" in str(exc))
"""


def test_load_agent_artifact_raises_what_the_public_package_raises(tmp_path: Path) -> None:
    """A missing agent is a FileNotFoundError naming the path, an unknown dialect a ValueError, on both packages
    (ours are our own one-line errors, subclasses of those)."""
    from _anchor import anchor_python

    outputs = [subprocess.run([str(python), "-c", ARTIFACT_ERRORS, str(tmp_path)], capture_output=True, text=True,
                              timeout=300) for python in (anchor_python(), Path(sys.executable))]
    assert outputs[0].stdout == outputs[1].stdout == "FileNotFoundError True\nValueError True\n", outputs


def test_two_variants_with_one_postfix_are_refused_when_the_script_is_built(tmp_path: Path) -> None:
    from open_agent_compiler.compiler.script import CompileScript
    from open_agent_compiler.model.core.model_preset import ModelPreset
    from open_agent_compiler.model.core.variant_spec import VariantSpec

    preset = ModelPreset(name="p", provider="anthropic", model_id="claude-haiku-4-5")
    made = [VariantSpec(name=name, postfix=postfix, preset=preset) for name, postfix in (("a", "-x"), ("b", "-y"))]
    CompileScript(target=tmp_path, factory_spec="agents:registry", config="default", variants=made)
    with pytest.raises(ValueError, match="'a' and 'b' share the postfix '-x'"):
        CompileScript(target=tmp_path, factory_spec="agents:registry", config="default",
                      variants=[made[0], made[1].model_copy(update={"postfix": "-x"})])


def test_compile_script_says_its_warnings_without_verbose(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from open_agent_compiler.compiler.script import CompileScript

    reg = AgentRegistry()
    model = ModelParameters(model_name="anthropic/claude-sonnet-4-5")
    worker = AgentDefinition(header=header("worker"), usage_explanation_long="w", usage_explanation_short="w",
                             system_prompt="Do the work.")
    boss = AgentDefinition(header=header("boss"), usage_explanation_long="b", usage_explanation_short="b",
                           system_prompt="Hand the work on.", subagents=[header("worker", mode="primary")])
    slots = [TemplateSlot(name="primary", default_agent_id=reg.register_agent("boss", boss, model)),
             TemplateSlot(name="worker", default_agent_id=reg.register_agent("worker", worker, model))]
    reg.register_template(TemplateTree(name="t", slots=slots))
    reg.create_compilation_config(CompilationConfig(name="default", template_name="t"))
    result = CompileScript(target=tmp_path, factory=lambda: reg, config="default").run()
    captured = capsys.readouterr()
    assert result.warnings and captured.out == ""
    assert captured.err.splitlines() == [f"warning: {warning}" for warning in result.warnings]
