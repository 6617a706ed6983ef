"""A resource-bound tool's tool test, run by `oac test` under open-agent-compiler 1.16.5 and under oac, with and
without `$OAC_RESOURCES_JSON` binding its database. oac gives the handler its resources as the script run as a
command gets them (passes, and says that 1.16.5 does not); 1.16.5's tool tests call `execute(input)` without
them, so the handler takes its "not bound" branch either way. Without the resources both fail — on oac also
right after a green run."""

import json
import shutil
import subprocess
import sys
from pathlib import Path

import sqlite3

from _anchor import anchor_venv

OURS = Path(sys.executable).with_name("oac")
TOOL = Path(__file__).resolve().parent / "tool_scripts" / "notes_tool.py"
REGISTRY = '''
from pathlib import Path

from open_agent_compiler.model.core.agent_model import (
    AgentDefinition, AgentHeader, CompilationConfig, ModelParameters, TemplateSlot, TemplateTree)
from open_agent_compiler.model.core.agent_registry import AgentRegistry
from open_agent_compiler.model.core.permissions_model import JsonToolPermission
from open_agent_compiler.model.core.test_model import JsonPathEvaluator, ToolTest
from open_agent_compiler.model.core.tools_model import (
    ScriptDefinition, ToolDefinition, ToolDefinitionHeader, ToolDefinitionLogicJson, ToolScriptDefinition)

HERE = Path(__file__).resolve().parent


def registry():
    notes = ToolDefinition(
        header=ToolDefinitionHeader(name="notes", description="Searches notes.", usage_explanation_long="",
                                    usage_explanation_short="notes", rules=[]),
        json_tool=ToolDefinitionLogicJson(
            permission_json=JsonToolPermission("notes", "custom_tool", "allow"), positive_examples=[],
            negative_examples=[], mode_specific_rules=[],
            tool_scripts=[ToolScriptDefinition(paths=None, scripts=[ScriptDefinition(
                target_file_path="scripts/notes_tool.py", source_file_path=HERE / "notes_tool.py",
                source_file_type="python", script_contents=None)])]),
        requires_resources=["notes"],
        tool_tests=[ToolTest(name="finds-a-note", input={"topic": "alpha"},
                             evaluators=[JsonPathEvaluator(path="source", expected="notes")])],
    )
    reg = AgentRegistry()
    agent = AgentDefinition(header=AgentHeader(agent_id="a", name="a", description="d"), usage_explanation_long="",
                            usage_explanation_short="", system_prompt="p", extra_tools=[notes])
    agent_id = reg.register_agent("a", agent, ModelParameters(model_name="anthropic/claude-sonnet-4-5"))
    reg.register_template(TemplateTree(name="t", description=None, slots=[
        TemplateSlot(name="primary", default_agent_id=agent_id)]))
    reg.create_compilation_config(CompilationConfig(name="c", template_name="t"))
    return reg
'''


def project(tmp_path: Path, name: str) -> Path:
    root = tmp_path / name
    root.mkdir()
    (root / "reg.py").write_text(REGISTRY)
    shutil.copy(TOOL, root / "notes_tool.py")
    with sqlite3.connect(root / "notes.db") as db:
        db.execute("create table notes (id integer primary key, topic text, body text)")
        db.execute("insert into notes (topic, body) values ('alpha', 'first')")
    return root


def summary(oac: Path, root: Path, bound: bool) -> tuple[str, bool]:
    """The summary line, and whether the run said how it differs from 1.16.5."""
    env = {"PATH": "/usr/bin:/bin", "HOME": str(root), "PYTHONDONTWRITEBYTECODE": "1"}
    if bound:
        env["OAC_RESOURCES_JSON"] = json.dumps({"notes": {"kind": "sqlite", "config": {"path": str(root / "notes.db")}}})
    done = subprocess.run([str(oac), "test", "reg:registry", "--config", "c"], cwd=root, env=env, capture_output=True,
                          text=True, timeout=300)
    line = next((line for line in done.stdout.splitlines() if line.startswith("oac test: ")), done.stdout + done.stderr)
    return line, "1.16.5's tool tests call execute() without them" in done.stderr


def test_the_tool_test_gets_the_resources_1_16_5_does_not_pass(tmp_path: Path) -> None:
    public = anchor_venv() / "bin/oac"
    passed = "oac test: discovered=1 passed=1 failed=0 skipped=0 not_runnable=0"
    failed = "oac test: discovered=1 passed=0 failed=1 skipped=0 not_runnable=0"
    theirs = project(tmp_path, "theirs")
    assert [summary(public, theirs, bound)[0] for bound in (True, False)] == [failed, failed]
    ours = project(tmp_path, "ours")
    assert [summary(OURS, ours, bound) for bound in (True, False)] == [(passed, True), (failed, False)]
