"""Issue 34: a resource-bound ScriptTool run by our own handler path (tool tests, agent tests' tool calls) gets
its resources as the production script command does — from `$OAC_RESOURCES_JSON` as the run has it when the
handler starts (a forked child would otherwise keep the zygote's copy from when it started) — and a green tool
test is not skipped once that value changes or goes away."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from open_agent_compiler import ToolDefinition, ToolDefinitionHeader
from open_agent_compiler.execution import zygote
from open_agent_compiler.execution.handlers import run_handler
from open_agent_compiler.model.resource_handle import RESOURCES_ENV

NOTES = '''
from pydantic import BaseModel
from open_agent_compiler.runtime import ScriptTool


class In(BaseModel):
    q: str


class Out(BaseModel):
    bound: bool
    path: str = ""


class Notes(ScriptTool[In, Out]):
    name = "notes"
    description = "Looks notes up in the database its access profile binds."

    def execute(self, input: In, resources=None) -> Out:
        if not resources or "notes_db" not in resources:
            return Out(bound=False)
        return Out(bound=True, path=str(resources["notes_db"].config["path"]))


if __name__ == "__main__":
    Notes.run()
'''
REGISTRY = '''
from open_agent_compiler import *

tool = ToolDefinition(
    header=ToolDefinitionHeader(name="notes", description="Looks notes up."),
    bash_tool=ToolDefinitionLogicBash(permission_bash=BashToolPermission(
        tool_name="bash", value="allow", allowed_commands=["python3 notes.py *"])),
    handler_script="notes.py", requires_resources=["notes_db"],
    tool_tests=[ToolTest(name="bound", input={"q": "x"},
                         evaluators=[JsonPathEvaluator(path="bound", expected=True)])],
)


def registry():
    reg = AgentRegistry()
    agent_id = reg.register_agent("a", AgentDefinition(header=AgentHeader(agent_id="a", name="a", description="d"),
                                                       extra_tools=[tool]),
                                  ModelParameters(model_name="anthropic/claude-sonnet-4-5"))
    reg.register_template(TemplateTree(name="t", slots=[TemplateSlot(name="primary", default_agent_id=agent_id)]))
    reg.create_compilation_config(CompilationConfig(name="c", template_name="t"))
    return reg
'''


def bound(path: str) -> str:
    return json.dumps({"notes_db": {"kind": "sqlite", "config": {"path": path}}})


@pytest.fixture
def notes(tmp_path: Path) -> ToolDefinition:
    (tmp_path / "notes.py").write_text(NOTES)
    return ToolDefinition(header=ToolDefinitionHeader(name="notes", description="n"), handler_script="notes.py")


@pytest.mark.parametrize("with_zygote", [True, False])
def test_the_handler_sees_the_resources_the_run_has_now(notes: ToolDefinition, tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch, with_zygote: bool) -> None:
    if with_zygote:
        zygote.start()  # started before the value is set, as a pytest fixture or a conftest sets it
    else:
        monkeypatch.setattr(zygote, "_client", None)
    monkeypatch.setenv(RESOURCES_ENV, bound("/data/notes.db"))
    outcome = run_handler(notes, {"q": "x"}, project_root=tmp_path, timeout=30)
    assert outcome.ok and outcome.output == {"bound": True, "path": "/data/notes.db"}, outcome
    monkeypatch.delenv(RESOURCES_ENV)
    outcome = run_handler(notes, {"q": "x"}, project_root=tmp_path, timeout=30)
    assert outcome.ok and outcome.output == {"bound": False, "path": ""}, outcome


def test_the_production_command_and_the_tool_test_agree(tmp_path: Path) -> None:
    (tmp_path / "notes.py").write_text(NOTES)
    (tmp_path / "reg.py").write_text(REGISTRY)
    base = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "PYTHONDONTWRITEBYTECODE": "1"}
    with_db = {**base, RESOURCES_ENV: bound(str(tmp_path / "notes.db"))}

    def production(env: dict[str, str]) -> dict:
        done = subprocess.run([sys.executable, "notes.py", "--q", "x"], cwd=tmp_path, env=env, capture_output=True,
                              text=True, timeout=60)
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout)

    def tool_test(env: dict[str, str]) -> str:
        done = subprocess.run([str(Path(sys.executable).with_name("oac")), "test", "reg:registry", "--config", "c"],
                              cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
        said = "1.16.5's tool tests call execute() without them" in done.stderr  # one line, when the value is set
        assert said == (RESOURCES_ENV in env), done.stderr
        return next(line for line in done.stdout.splitlines() if line.startswith("oac test: "))

    assert production(with_db)["bound"] and not production(base)["bound"]
    assert tool_test(with_db) == "oac test: discovered=1 passed=1 failed=0 skipped=0 not_runnable=0"
    # the resources are an input of the test: gone, the test runs again (and fails) instead of a green skip
    assert tool_test(base) == "oac test: discovered=1 passed=0 failed=1 skipped=0 not_runnable=0"
    assert tool_test(with_db) == "oac test: discovered=1 passed=1 failed=0 skipped=0 not_runnable=0"
    assert tool_test(with_db) == "oac test: discovered=1 passed=0 failed=0 skipped=1 not_runnable=0"
    other = {**base, RESOURCES_ENV: bound(str(tmp_path / "other.db"))}
    assert tool_test(other) == "oac test: discovered=1 passed=1 failed=0 skipped=0 not_runnable=0"


def test_the_note_is_said_only_where_a_real_handler_would_get_the_resources(tmp_path: Path,
                                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    from open_agent_compiler import MockResponse
    from open_agent_compiler.model.core.tool import ToolDefinition as Tool
    from open_agent_compiler.testing.discovery import discover
    from open_agent_compiler.testing.migration_notes import RESOURCES_NOTE, resources_note

    monkeypatch.syspath_prepend(str(tmp_path))
    (tmp_path / "notes_reg.py").write_text(REGISTRY)
    import notes_reg

    def notes(tool: Tool | None = None) -> list[str]:
        registry = notes_reg.registry() if tool is None else _with_tool(notes_reg, tool)
        resolved = registry.resolve_config("c")
        return resources_note(discover(resolved), resolved)

    monkeypatch.setenv(RESOURCES_ENV, bound("/data/notes.db"))
    assert notes() == [RESOURCES_NOTE]
    assert notes(notes_reg.tool.model_copy(update={"mock": MockResponse(fixed_output={"bound": True})})) == []
    monkeypatch.delenv(RESOURCES_ENV)
    assert notes() == []


def _with_tool(module, tool):  # type: ignore[no-untyped-def]
    original = module.tool
    module.tool = tool
    try:
        return module.registry()
    finally:
        module.tool = original
