"""A scratch project for the shared-state tests: one agent, three mocked tools (a callable each), a capability
test. `alpha`'s mock imports helper.py (a discovered dependency); `beta` fails while BETA_FAIL is set (a test
whose outcome changes without its key changing); `gamma` reads gamma.txt (a discovered data file)
and runs the command in STOP_SERVER (to stop the database mid-run)."""

import shutil
from pathlib import Path

from engine_project import Project

AGENTS = '''
from open_agent_compiler import (
    AgentDefinition, AgentHeader, AgentRegistry, BashToolPermission, CapabilityTest, CompilationConfig,
    EqualsEvaluator, MockResponse, TemplateSlot, TemplateTree, ToolDefinition, ToolDefinitionHeader,
    ToolDefinitionLogicBash, ToolTest,
)


def tool(name):
    return ToolDefinition(
        header=ToolDefinitionHeader(name=name, description=f"{name} tool"),
        bash_tool=ToolDefinitionLogicBash(permission_bash=BashToolPermission(value="allow",
                                                                             allowed_commands=[f"{name} *"])),
        mock=MockResponse(kind="callable", callable_spec=f"mocks:{name}"),
        tool_tests=[ToolTest(name=f"{name}-ok", input={}, evaluators=(EqualsEvaluator(field="ok", expected=True),))],
    )


def registry():
    agent = AgentDefinition(header=AgentHeader(agent_id="a", name="a", description="d"),
                            extra_tools=[tool("alpha"), tool("beta"), tool("gamma")],
                            capability_tests=[CapabilityTest(name="alpha-allowed", must_have_bash_patterns=("alpha *",))])
    reg = AgentRegistry()
    reg.register_agent("a", agent)
    reg.register_template(TemplateTree(name="tpl", slots=[TemplateSlot(name="primary", default_agent_id="a")]))
    reg.create_compilation_config(CompilationConfig(name="prod", template_name="tpl"))
    return reg
'''

MOCKS = '''
import os
import subprocess

import helper


def _ran(name):
    with open("executions.log", "a") as log:
        log.write(name + "\\n")


def alpha(payload):
    _ran("alpha")
    return {"ok": helper.OK}


def beta(payload):
    _ran("beta")
    return {"ok": not os.environ.get("BETA_FAIL")}


def gamma(payload):
    _ran("gamma")
    with open("gamma.txt") as data:  # a data file: a discovered read of this test only
        data.read()
    if os.environ.get("STOP_SERVER"):
        subprocess.run(os.environ["STOP_SERVER"].split("\\x1f"), check=True, capture_output=True)
    return {"ok": True}
'''

HELPER = "OK = True\n"
PYPROJECT = '''
[project]
name = "{name}"
version = "0"

[tool.oac]
factory = "agents:registry"
config = "prod"
'''
DODO = "from open_agent_compiler.tasks import DOIT_CONFIG, task_test  # noqa: F401\n"
ALL = ("alpha-ok", "beta-ok", "gamma-ok", "alpha-allowed")


def make(root: Path, name: str = "demo") -> Project:
    return Project.of(root, {"agents.py": AGENTS, "mocks.py": MOCKS, "helper.py": HELPER, "gamma.txt": "v1\n",
                             "pyproject.toml": PYPROJECT.format(name=name), "dodo.py": DODO})


def clone(source: Project, root: Path) -> Project:
    """A fresh checkout of `source`: its files, none of its state."""
    shutil.copytree(source.root, root, ignore=shutil.ignore_patterns(".oac", "__pycache__", "executions.log",
                                                                     ".doit.db*"))
    return Project(root)
