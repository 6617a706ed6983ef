"""`oac compile` and `oac info` through click: output lines, exit codes, and hostile input."""

import itertools
import textwrap
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from open_agent_compiler.cli.compile_cmd import compile_command
from open_agent_compiler.cli.info_cmd import info_command

_counter = itertools.count()

FACTORY = '''
from open_agent_compiler.model.core.agent import AgentDefinition, AgentHeader
from open_agent_compiler.model.core.template import CompilationConfig, TemplateSlot, TemplateTree
from open_agent_compiler.model.core.tool import (JsonToolPermission, ScriptDefinition, ToolDefinition,
    ToolDefinitionHeader, ToolDefinitionLogicJson, ToolScriptDefinition)
from open_agent_compiler.model.registry import AgentRegistry

def registry():
    tool = ToolDefinition(
        header=ToolDefinitionHeader(name="run", description="Runs."),
        json_tool=ToolDefinitionLogicJson(
            permission_json=JsonToolPermission(allowed_commands=["python3 run.py"]),
            tool_scripts=[ToolScriptDefinition(scripts=[ScriptDefinition(target_file_path={target!r},
                                                                         script_contents="print(1)")])]))
    reg = AgentRegistry()
    agent = AgentDefinition(header=AgentHeader(agent_id={agent_id!r}, name="a", description="An agent."),
                            system_prompt="Hi.", extra_tools=[tool])
    reg.register_agent({agent_name!r}, agent)
    reg.register_template(TemplateTree(name="t", slots=[TemplateSlot(name="primary", default_agent_id={agent_id!r}),
                                                        TemplateSlot(name={slot!r}, default_agent_id={agent_id!r})]))
    reg.create_compilation_config(CompilationConfig(name="prod", template_name="t", postfix={postfix!r}))
    return reg
'''


def cli() -> click.Group:
    group = click.Group("oac")
    group.add_command(compile_command, "compile")
    group.add_command(info_command, "info")
    return group


def factory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, **values: str) -> str:
    fields = {"target": "run.py", "agent_id": "a", "agent_name": "a", "slot": "helper", "postfix": ""} | values
    module = f"oac_cli_factory_{next(_counter)}"
    (tmp_path / f"{module}.py").write_text(textwrap.dedent(FACTORY.format(**fields)))
    monkeypatch.chdir(tmp_path)
    return f"{module}:registry"


def run(*args: str):  # type: ignore[no-untyped-def]
    return CliRunner().invoke(cli(), list(args))


def files_under(root: Path) -> list[str]:
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file())


def test_compile_prints_each_file_and_a_summary(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    spec = factory(tmp_path, monkeypatch)
    result = run("compile", spec, "--config", "prod", "--target", "build")
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert "wrote build/.opencode/agents/primary.md" in lines and "wrote build/run.py" in lines
    assert lines[-1] == "oac compile: opencode -> build: written=3 unchanged=0 removed=0 kept=0"
    again = run("compile", spec, "--config", "prod", "--target", "build")
    said = [line for line in again.output.splitlines() if not line.startswith("warning: ")]  # (a JSON tool's note)
    assert said == ["oac compile: opencode -> build: written=0 unchanged=3 removed=0 kept=0"]
    verbose = run("compile", spec, "--config", "prod", "--target", "build", "-v")
    assert "unchanged build/.opencode/agents/helper.md" in verbose.output.splitlines()


def test_all_dialects_dry_run_and_clean(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    spec = factory(tmp_path, monkeypatch)
    dry = run("compile", spec, "--config", "prod", "--target", "build", "--dialect", "all", "--dry-run")
    assert dry.exit_code == 0 and "would write build/.codex/agents/helper.toml" in dry.output
    assert dry.output.count("(dry run: nothing changed)") == 4 and not (tmp_path / "build").exists()
    done = run("compile", spec, "--config", "prod", "--target", "build", "--dialect", "claude", "--dialect", "pi")
    assert done.exit_code == 0 and files_under(tmp_path / "build") == [
        ".claude/agents/helper.md", ".claude/agents/primary.md", ".claude/settings.json", ".oac/manifest.json",
        ".pi/agents/helper.md", ".pi/agents/primary.md", "run.py"]
    clean = run("compile", spec, "--config", "prod", "--target", "build", "--dialect", "all", "--clean")
    assert clean.exit_code == 0 and "removed build/.pi/agents/primary.md" in clean.output
    assert "wrote build/.pi/agents/primary.md" in clean.output  # wiped what we wrote, then built
    assert "build/.codex/agents/helper.toml" in [f"build/{f}" for f in files_under(tmp_path / "build")]


def test_unknown_config_is_one_line_exit_2(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    spec = factory(tmp_path, monkeypatch)
    result = run("compile", spec, "--config", "nope", "--target", "build")
    assert result.exit_code == 2
    assert result.output == "oac: unknown compilation config 'nope'; known: prod\n"
    assert not (tmp_path / "build").exists()


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("slot", "../up", "unsafe slot name"),
        ("slot", "a/b", "unsafe slot name"),
        ("slot", "/abs", "unsafe slot name"),
        ("slot", "nul\x00", "unsafe slot name"),
        ("postfix", "/x", "unsafe postfix"),
        ("postfix", "..", "unsafe postfix"),
        ("agent_name", "a/b", "unsafe agent name"),
        ("agent_id", "..", "unsafe agent_id"),
        ("target", "../escape.py", "unsafe script target of tool 'run'"),
        ("target", "/etc/escape.py", "unsafe script target of tool 'run'"),
        ("target", "scripts/a\x00b.py", "unsafe script target of tool 'run'"),
        ("target", "scripts\\win.py", "unsafe script target of tool 'run'"),
        ("target", ".oac/manifest.json", ".oac/ is reserved"),
        ("target", ".git/hooks/pre-commit", ".git/ is reserved"),
        ("target", ".opencode/agents/primary.md", "two compiled outputs would be written to"),
    ],
)
def test_hostile_names_exit_2_and_write_nothing(
    field: str, value: str, message: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    spec = factory(tmp_path, monkeypatch, **{field: value})
    result = run("compile", spec, "--config", "prod", "--target", "build", "--dialect", "all")
    assert result.exit_code == 2, result.output
    assert result.output.startswith("oac: ") and result.output.count("\n") == 1 and message in result.output
    assert "Traceback" not in result.output
    assert not (tmp_path / "build").exists()
    assert sorted(p.name for p in tmp_path.iterdir() if p.name != "__pycache__") == [spec.split(":")[0] + ".py"]


def test_info_lists_registry_and_dialects(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    spec = factory(tmp_path, monkeypatch)
    result = run("info", spec, "--dialects")
    assert result.exit_code == 0
    assert "configs:\n  prod: template t\n" in result.output
    assert "  t: primary=a, helper=a" in result.output and "  a (id a, default model)" in result.output
    assert "  codex: agents in .codex/agents/*.toml, skills in .agents/skills/" in result.output
    assert run("info").output.startswith("dialects:\n  opencode: agents in .opencode/agents/*.md")


def test_info_with_a_bad_factory_is_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    result = run("info", "no_such_module_here:registry")
    assert result.exit_code == 2 and result.output.startswith("oac: factory 'no_such_module_here:registry'")
