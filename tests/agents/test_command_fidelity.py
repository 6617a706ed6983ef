"""The command an agent test made a real harness run is the command production runs: re-run outside the test,
in the build, against the real handler, it succeeds with the output the test saw (a JSON tool, a bash "flag"
tool, and the public package's argparse form of the same words)."""

import argparse
import io
import json
import os
import shlex
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from open_agent_compiler.compiler.dialects import get_dialect
from open_agent_compiler.model.factory import load_registry
from open_agent_compiler.testing.agent_runner import compiled_agent
from open_agent_compiler.testing.discovery import discover
from open_agent_compiler.testing.invokers.protocol import Deadline, ToolDispatcher
from open_agent_compiler.testing.invokers.select import load_invoker
from open_agent_compiler.testing.mocks import MockSession
from open_agent_compiler.testing.runner import RunSettings

from test_harness_runs import binary_or_skip

LINT = '''
from pydantic import BaseModel
from open_agent_compiler.model.script_tool import ScriptTool

class LintIn(BaseModel):
    source: str
    max_line: int = 79
    strict: bool = False
    ignore: list[str] = []

class LintOut(BaseModel):
    long_lines: list[int]
    strict: bool
    ignored: list[str]

class Lint(ScriptTool[LintIn, LintOut]):
    name = "lint-py"
    description = "Report lines longer than max_line."

    def execute(self, input):
        lines = input.source.splitlines()
        return LintOut(long_lines=[n for n, line in enumerate(lines, 1) if len(line) > input.max_line],
                       strict=input.strict, ignored=input.ignore)

if __name__ == "__main__":
    Lint.run()  # the public package's style: no SystemExit around it
'''

COUNT = '''
from pydantic import BaseModel
from open_agent_compiler.model.script_tool import ScriptTool

class CountIn(BaseModel):
    text: str
    top: int = 3
    lower: bool = True

class CountOut(BaseModel):
    words: int
    first: list[str]

class Count(ScriptTool[CountIn, CountOut]):
    name = "word-count"
    description = "Count words."

    def execute(self, input):
        words = (input.text.lower() if input.lower else input.text).split()
        return CountOut(words=len(words), first=words[: input.top])

if __name__ == "__main__":
    raise SystemExit(Count.run())
'''

AGENTS = '''
from pathlib import Path
from open_agent_compiler import (AgentDefinition, AgentHeader, AgentRegistry, AgentTest, BashToolPermission,
    CompilationConfig, JsonToolPermission, ModelParameters, ScriptDefinition, TemplateSlot, TemplateTree,
    ToolDefinition, ToolDefinitionHeader, ToolDefinitionLogicBash, ToolDefinitionLogicJson, ToolScriptDefinition,
    Turn)

HERE = Path(__file__).parent

def registry():
    lint = ToolDefinition(header=ToolDefinitionHeader(name="lint-py", description="lint python"),
        json_tool=ToolDefinitionLogicJson(permission_json=JsonToolPermission(
            allowed_commands=["python3 scripts/lint_py.py *"]),
            tool_scripts=[ToolScriptDefinition(scripts=[ScriptDefinition(target_file_path="scripts/lint_py.py",
                                                                         source_file_path=str(HERE / "src/lint_py.py"))])]),
        handler_script="src/lint_py.py")
    count = ToolDefinition(header=ToolDefinitionHeader(name="word-count", description="count words"),
        bash_tool=ToolDefinitionLogicBash(permission_bash=BashToolPermission(
            allowed_commands=["python3 scripts/word_count.py *"])),
        json_tool=ToolDefinitionLogicJson(permission_json=JsonToolPermission(
            allowed_commands=["python3 scripts/word_count.py *"]),
            tool_scripts=[ToolScriptDefinition(scripts=[ScriptDefinition(target_file_path="scripts/word_count.py",
                                                                         source_file_path=str(HERE / "src/word_count.py"))])]),
        handler_script="src/word_count.py")
    agent = AgentDefinition(header=AgentHeader(agent_id="a", name="a", description="reviewer"),
        system_prompt="Review code.", extra_tools=[lint, count],
        agent_tests=[AgentTest(name="review", timeout_s=150, turns=(Turn(prompt="review"),))])
    reg = AgentRegistry()
    reg.register_agent("a", agent, ModelParameters(model_name="oac/oac-scripted"))
    reg.register_template(TemplateTree(name="tpl", slots=[TemplateSlot(name="primary", default_agent_id="a")]))
    reg.create_compilation_config(CompilationConfig(name="c", template_name="tpl"))
    return reg
'''

LINT_ARGS = {"source": "x = 1\\nprint('a rather long line of code')\\n", "max_line": 20, "strict": True,
             "ignore": ["E1", "W 2"]}
COUNT_ARGS = {"text": "To be or not, it's 'quoted'", "top": 2, "lower": False}

SCRIPTS = f'''
from open_agent_compiler.testing.invokers.script import call, calls, reply, ToolUse

SCRIPTS = {{"review": [[calls(ToolUse(tool="lint-py", args={LINT_ARGS!r}),
                              ToolUse(tool="word-count", args={COUNT_ARGS!r})),
                        lambda view: reply(str([c.output for c in view.tool_results]))]]}}
'''


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("fidelity")
    (root / "src").mkdir()
    (root / "src/lint_py.py").write_text(textwrap.dedent(LINT))
    (root / "src/word_count.py").write_text(textwrap.dedent(COUNT))
    (root / "agents.py").write_text(textwrap.dedent(AGENTS))
    (root / "agents_scripts.py").write_text(SCRIPTS)
    return root


def public_argparse(words: list[str]) -> dict[str, object]:
    """The public package 1.16.5's CLI as documented and observed: `--field VALUE` for str/int/float fields,
    `--flag`/`--no-flag` for booleans (lists only through --json)."""
    parser = argparse.ArgumentParser(exit_on_error=False)
    parser.add_argument("--text")
    parser.add_argument("--top", type=int)
    parser.add_argument("--lower", action=argparse.BooleanOptionalAction)
    return vars(parser.parse_args(words))


def run_in_build(command: str, build: Path) -> subprocess.CompletedProcess[str]:
    """The command as the harness's shell ran it, with `python3` the Python oac is installed in."""
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}")
    return subprocess.run(["bash", "-c", command], cwd=build, env=env, capture_output=True, text=True, timeout=60)


@pytest.mark.harness
@pytest.mark.parametrize("harness", ["opencode", "claude", "codex", "pi"])
def test_the_command_a_harness_ran_runs_against_the_real_handler(harness: str, project: Path, tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    binary_or_skip(harness, monkeypatch)
    sys.path.insert(0, str(project))
    try:
        resolved = load_registry("agents:registry", str(project)).resolve_config("c")
    finally:
        sys.path.remove(str(project))
    build = tmp_path / "build"
    compiled = get_dialect(harness).compile(resolved, source_root=project)
    for path, data in compiled.file_map().items():
        (build / path).parent.mkdir(parents=True, exist_ok=True)
        (build / path).write_bytes(data)
    case = [c for c in discover(resolved) if c.kind == "agent"][0]
    invoker = load_invoker(harness, root=project, factory="agents:registry", dialect=harness)
    agent = compiled_agent(case, resolved, RunSettings(project_root=project, build_dir=build, dialect=harness))
    dispatcher = ToolDispatcher(agent.tools, None, MockSession(project_root=project), hermetic=False, timeout=30)
    invoker.progress = io.StringIO()  # what a terminal would show
    with invoker.session(agent, case.test, dispatcher, Deadline(400)) as session:
        result = session.turn(1, "review")
    lines = invoker.progress.getvalue().splitlines()
    assert lines[0].startswith(f"  agent 'review' ({harness}) turn 1/1 running: 0 tool calls so far, ")
    assert lines[1].startswith(f"  agent 'review' ({harness}) turn 1/1 done: 2 tool calls so far, ") and len(lines) == 2
    commands = invoker.last_server.commands
    assert len(commands) == 2 and sorted(c.tool_name for c in dispatcher.log) == ["lint-py", "word-count"], \
        (commands, dispatcher.log)
    seen = {c.tool_name: c.output for c in dispatcher.log}
    assert all(c.error is None for c in dispatcher.log), dispatcher.log
    for command in commands:
        tool = "lint-py" if "lint_py.py" in command else "word-count"
        again = run_in_build(command, build)
        assert again.returncode == 0, (command, again.stderr)
        assert json.loads(again.stdout) == seen[tool], command
        if tool == "word-count":  # the same words, read by the public package's argparse CLI
            assert public_argparse(shlex.split(command)[2:]) == COUNT_ARGS
    # what the compiled prompt teaches is that form
    taught = "`python3 scripts/lint_py.py --<name> <value> ...`"
    assert [path for path, data in compiled.file_map().items() if taught in data.decode()], taught
    assert result.text
