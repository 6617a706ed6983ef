"""Helpers and fixtures for end-to-end tests of `oac test`: a scratch project and a way to run the real command."""

import os
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
OAC = str(Path(sys.executable).with_name("oac"))
SUMMARY = "oac test: discovered={} passed={} failed={} skipped={} not_runnable={}"

PROJECT_AGENTS = '''
from open_agent_compiler import (
    AgentDefinition, AgentHeader, AgentRegistry, BashToolPermission, CapabilityTest, CompilationConfig,
    EqualsEvaluator, MockResponse, ModelParameters, TemplateSlot, TemplateTree, ToolDefinition,
    ToolDefinitionHeader, ToolDefinitionLogicBash, ToolTest,
)


def bash(pattern):
    return ToolDefinitionLogicBash(permission_bash=BashToolPermission(value="allow", allowed_commands=[pattern]))


def registry():
    lookup = ToolDefinition(
        header=ToolDefinitionHeader(name="lookup", description="Upper-cases a query."),
        bash_tool=bash("python handlers/lookup.py *"),
        handler_script="handlers/lookup.py",
        tool_tests=[ToolTest(name="lookup-real", input={"q": "abc"},
                             evaluators=(EqualsEvaluator(field="answer", expected="ABC"),))],
    )
    counter = ToolDefinition(
        header=ToolDefinitionHeader(name="counter", description="Counts."),
        bash_tool=bash("python counter.py"),
        mock=MockResponse(kind="callable", callable_spec="mockmod:answer"),
        tool_tests=[ToolTest(name="counter-mock", input={}, evaluators=(EqualsEvaluator(field="n", expected=1),))],
    )
    alpha = AgentDefinition(
        header=AgentHeader(agent_id="alpha", name="alpha", description="First agent."),
        system_prompt="ALPHA_PROMPT",
        extra_tools=[lookup],
        capability_tests=[CapabilityTest(name="same-name", must_have_bash_patterns=("python handlers/lookup.py *",))],
    )
    beta = AgentDefinition(
        header=AgentHeader(agent_id="beta", name="beta", description="Second agent."),
        system_prompt="BETA_PROMPT",
        extra_tools=[counter],
        capability_tests=[CapabilityTest(name="same-name", must_have_bash_patterns=("python counter.py",))],
    )
    reg = AgentRegistry()
    reg.register_agent("alpha", alpha, ModelParameters(model_name="test/model-a"))
    reg.register_agent("beta", beta, ModelParameters(model_name="test/model-b"))
    reg.register_template(TemplateTree(name="tpl", slots=[TemplateSlot(name="primary", default_agent_id="alpha"),
                                                          TemplateSlot(name="helper", default_agent_id="beta")]))
    reg.create_compilation_config(CompilationConfig(name="prod", template_name="tpl"))
    return reg
'''

HANDLER = '''
import os
from pydantic import BaseModel
from open_agent_compiler import ScriptTool


class LookupIn(BaseModel):
    q: str


class LookupOut(BaseModel):
    answer: str


class Lookup(ScriptTool[LookupIn, LookupOut]):
    name = "lookup"
    description = "Upper-cases a query."

    def execute(self, input: LookupIn) -> LookupOut:
        with open("executions.log", "a") as log:
            log.write("lookup\\n")
        return LookupOut(answer=TRANSFORM(input.q))


TRANSFORM = str.upper
'''

# Appended to a test project's agents.py: a registry with one agent "a" in slot "primary" and config "prod".
ONE_AGENT = '''

def one_agent(tools):
    agent = AgentDefinition(header=AgentHeader(agent_id="a", name="a", description="d"), extra_tools=tools)
    reg = AgentRegistry()
    reg.register_agent("a", agent)
    reg.register_template(TemplateTree(name="tpl", slots=[TemplateSlot(name="primary", default_agent_id="a")]))
    reg.create_compilation_config(CompilationConfig(name="prod", template_name="tpl"))
    return reg
'''

MOCKMOD = '''
def answer(payload):
    with open("executions.log", "a") as log:
        log.write("counter\\n")
    return {"n": 1}
'''


# An invoker that, like a harness, runs from the compiled files of the build: its answer is the agent's file.
BUILD_READER = '''
from contextlib import contextmanager

from open_agent_compiler.testing.invokers.protocol import InvokerError, InvokerInfo, TurnResult


class Reply:
    def __init__(self, text):
        self.text = text

    def turn(self, index, prompt):
        return TurnResult(text=self.text)


class BuildReader:
    info = InvokerInfo(name="build-reader")

    @contextmanager
    def session(self, agent, test, dispatcher, deadline):
        path = agent.build_dir / ".opencode" / "agents" / f"{agent.compiled_name}.md"
        if not path.is_file():
            raise InvokerError(f"no compiled agent at {path}")
        yield Reply(path.read_text())


def make():
    return BuildReader()
'''
READ_BUILD = ("--invoker", "build_reader:make")


def add_agent_tests(project: "Project") -> None:
    """Give alpha and beta an agent test each that passes only if its compiled file is in the build (run them
    with READ_BUILD): 6 tests in all."""
    project.write("build_reader.py", BUILD_READER)
    project.edit("agents.py", "ToolDefinitionLogicBash, ToolTest,", "ToolDefinitionLogicBash, ToolTest, AgentTest, "
                 "SubstringEvaluator,")
    for name in ("ALPHA", "BETA"):
        project.edit("agents.py", f'system_prompt="{name}_PROMPT",',
                     f'system_prompt="{name}_PROMPT", agent_tests=[AgentTest(name="reads-build", prompt="hi", '
                     f'evaluators=(SubstringEvaluator(needle="{name}_PROMPT"),))],')


class Project:
    def __init__(self, root: Path) -> None:
        self.root = root

    @classmethod
    def of(cls, root: Path, files: dict[str, str]) -> "Project":
        """A scratch project at `root` holding `files` (relative path → text)."""
        proj = cls(root)
        for relative, text in files.items():
            proj.write(relative, text)
        return proj

    def write(self, relative: str, text: str) -> Path:
        path = self.root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
        return path

    def edit(self, relative: str, old: str, new: str) -> None:
        path = self.root / relative
        text = path.read_text()
        assert old in text, f"{old!r} not in {relative}"
        path.write_text(text.replace(old, new))

    def oac(self, *args: str, check_code: int | None = None, env: dict | None = None,
            timeout: float = 120) -> subprocess.CompletedProcess:
        full_env = dict(os.environ)
        full_env.pop("OAC_HERMETIC", None)
        full_env.update(env or {})
        done = subprocess.run([OAC, *args], cwd=self.root, capture_output=True, text=True, env=full_env,
                              timeout=timeout)
        if check_code is not None:
            assert done.returncode == check_code, f"exit {done.returncode}\n{done.stdout}\n{done.stderr}"
        return done

    def test(self, *extra: str, code: int | None = 0, **kwargs) -> subprocess.CompletedProcess:
        return self.oac("test", "agents:registry", "--config", "prod", "-v", *extra, check_code=code, **kwargs)

    def executions(self) -> list[str]:
        log = self.root / "executions.log"
        return log.read_text().split() if log.exists() else []

    def records(self) -> list[dict]:
        import json
        path = self.root / ".oac" / "test_results.jsonl"
        return [json.loads(line) for line in path.read_text().splitlines() if line.strip()] if path.exists() else []


@pytest.fixture
def project(tmp_path: Path) -> Project:
    return Project.of(tmp_path / "proj", {"agents.py": PROJECT_AGENTS, "handlers/lookup.py": HANDLER,
                                          "mockmod.py": MOCKMOD})


@pytest.fixture
def quickstart(tmp_path: Path) -> Project:
    root = tmp_path / "quickstart"
    shutil.copytree(REPO / "examples" / "quickstart", root, ignore=shutil.ignore_patterns(".oac", "__pycache__"))
    return Project(root)


def inner_pytest_env(**extra: str) -> dict[str, str]:
    """The environment of a pytest run inside a test: this suite may itself run under xdist, and its worker's
    variables must not name the inner session's processes."""
    return {**{name: value for name, value in os.environ.items() if not name.startswith("PYTEST_XDIST")}, **extra}


def counting_conftest(imports: str, *counted: tuple[str, str, str]) -> str:
    """A conftest.py for a scratch project that counts calls of `owner.attr` under `label` (one triple each) in
    the pytest process, and writes them to `counts-<xdist worker or main>.json` when pytest ends."""
    patches = "".join(f"counting({owner}, {attr!r}, {label!r})\n" for owner, attr, label in counted)
    return f'''
import json, os
from collections import Counter
from pathlib import Path

{imports}

COUNTS = Counter()


def counting(owner, attr, label):
    original = getattr(owner, attr)

    def wrapper(*args, **kwargs):
        COUNTS[label] += 1
        return original(*args, **kwargs)

    setattr(owner, attr, wrapper)


{patches}

def pytest_unconfigure(config):
    who = os.environ.get("PYTEST_XDIST_WORKER", "main")
    Path(f"counts-{{who}}.json").write_text(json.dumps(COUNTS))
'''


def green_skips(pytest_output: str) -> int:
    """How many items pytest's `-rs` summary lists as green; it folds items with one reason (two tests green
    since the same millisecond) into one `SKIPPED [N]` line, so lines alone undercount."""
    return sum(int(n) for n in re.findall(r"^SKIPPED \[(\d+)\] .*green: key unchanged since ", pytest_output,
                                          re.MULTILINE))


def summary_line(output: str) -> str:
    lines = [line for line in output.splitlines() if line.startswith("oac test:")]
    assert len(lines) == 1, output
    return lines[0]
