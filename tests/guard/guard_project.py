"""A project with one of each kind of user code, each importing a helper module and reading a data file.

Every kind reads `<kind>_helper.N` and `data/<kind>.txt` (both "1") into what decides its test, and has a
`# FAULT` line where a fault is planted. What each kind's test is and how `oac test` is run for it is in `KINDS`.
"""

from pathlib import Path

from engine_project import Project

AGENTS = '''
from pathlib import Path

from open_agent_compiler import (
    AgentDefinition, AgentHeader, AgentRegistry, AgentTest, CapabilityTest, CompilationConfig, EqualsEvaluator,
    JsonToolPermission, LLMJudgeEvaluator, MockResponse, ModelParameters, SubstringEvaluator, TemplateSlot,
    TemplateTree, ToolDefinition, ToolDefinitionHeader, ToolDefinitionLogicJson, ToolTest,
)
import factory_helper
from evals import Check

DESC = "d"  # every test's description
TOOL_DESC = "mocked"  # the mocked tool's description
FIXED = {"n": 1}  # the evaluated tool's mock output
SCHEMA = {"type": "object", "properties": {"q": {"type": "string"}}}  # the schema tool's input_schema
MODEL = "test/model-a"
ACCESS = None  # the mock test's access profile
INPUTS = ("docs/*.txt",)  # declared inputs of the evaluated tool
TEST_INPUTS = ("notes/*.md",)  # declared inputs of the capability test


def tool(name, test, evaluators, description=None, **kw):
    return ToolDefinition(header=ToolDefinitionHeader(name=name, description=description or name), **kw,
                          tool_tests=[ToolTest(name=test, description=DESC, input={}, evaluators=evaluators,
                                               access_profile=ACCESS if name == "mocked" else None)])


SETTINGS = ""  # what the factory read into a global, which no compiled agent holds


def registry():
    # FAULT factory
    global SETTINGS
    SETTINGS = Path("data/settings.txt").read_text()
    prompt = Path("prompts/system.md").read_text().strip() + f" v{factory_helper.N}"
    one = (EqualsEvaluator(field="n", expected=1),)
    tools = [
        tool("handled", "handler-test", one, handler_script="handlers/handled.py"),
        tool("mocked", "mock-test", one, TOOL_DESC, mock=MockResponse(kind="callable", callable_spec="mockmod:answer")),
        tool("evaluated", "evaluator-test", (Check(),), mock=MockResponse(fixed_output=FIXED), inputs=INPUTS),
        tool("judged", "judge-test", (LLMJudgeEvaluator(criteria="is one"),), mock=MockResponse(fixed_output={"n": 1})),
        ToolDefinition(header=ToolDefinitionHeader(name="schema", description="schema"),
                       json_tool=ToolDefinitionLogicJson(permission_json=JsonToolPermission(tool_name="schema",
                                                                                             value="allow"),
                                                         input_schema=SCHEMA),
                       mock=MockResponse(fixed_output={"ok": True})),
    ]
    agent = AgentDefinition(
        header=AgentHeader(agent_id="primary", name="primary", description="The agent."), system_prompt=prompt,
        extra_tools=tools,
        capability_tests=[CapabilityTest(name="capability-test", description=DESC, must_have_tools=("mocked",),
                                         evaluators=(Check(),), inputs=TEST_INPUTS)],
        agent_tests=[AgentTest(name="agent-test", description=DESC, prompt="hi",
                               evaluators=(SubstringEvaluator(needle="n=1 n=1"),))])
    reg = AgentRegistry()
    reg.register_agent("primary", agent, ModelParameters(model_name=MODEL))
    reg.register_template(TemplateTree(name="tpl", slots=[TemplateSlot(name="primary", default_agent_id="primary")]))
    reg.create_compilation_config(CompilationConfig(name="prod", template_name="tpl"))
    return reg
'''

HANDLER = '''
from pathlib import Path
from pydantic import BaseModel
from open_agent_compiler import ScriptTool
import handler_helper


class Empty(BaseModel):
    pass


class N(BaseModel):
    n: int


class Handled(ScriptTool[Empty, N]):
    name = "handled"

    def execute(self, input):
        # FAULT handler
        return N(n=handler_helper.N * int(Path("data/handler.txt").read_text()))
'''

MOCK = '''
from pathlib import Path
import mock_helper


def answer(payload):
    # FAULT mock
    return {"n": mock_helper.N * int(Path("data/mock.txt").read_text())}
'''

EVALS = '''
from pathlib import Path
from typing import Literal
from open_agent_compiler.model.core.evaluator import Evaluator
import evaluator_helper


class Check(Evaluator):
    kind: Literal["guard-check"] = "guard-check"

    def evaluate(self, context):
        # FAULT evaluator
        want = evaluator_helper.N * int(Path("data/evaluator.txt").read_text())
        return self.result(context.target["n"] == want, f"n={context.target['n']} want={want}")
'''

SCRIPT = '''
from pathlib import Path
from open_agent_compiler.testing.invokers.script import reply
import script_helper


def answer(view):
    # FAULT script
    return reply(f"n={script_helper.N} n={Path('data/script.txt').read_text().strip()}")


SCRIPTS = {"agent-test": answer}
'''

JUDGE = '''
from pathlib import Path
import judge_helper


class Judge:
    def judge(self, *, criteria, target, model=None):
        ok = judge_helper.N * int(Path("data/judge.txt").read_text()) == 1
        return {"pass": ok, "score": 1.0 if ok else 0.0, "reasoning": "guard"}


def make():
    # FAULT judge
    return Judge()
'''

INVOKER = '''
from contextlib import contextmanager
from pathlib import Path
from open_agent_compiler.testing.invokers.protocol import InvokerInfo, TurnResult
import invoker_helper


class Echo:
    info = InvokerInfo(name="guard", version="1")

    @contextmanager
    def session(self, agent, test, dispatcher, deadline):
        yield self

    def turn(self, index, prompt):
        return TurnResult(text=f"n={invoker_helper.N} n={Path('data/invoker.txt').read_text().strip()}")


def make():
    # FAULT invoker
    return Echo()
'''

PYPROJECT = '''
[tool.oac]
factory = "agents:registry"
config = "prod"
invoker_script = "scripts_mod:SCRIPTS"

[[tool.oac.compile]]
config = "prod"
dialect = "opencode"
target = "out"
'''

KINDS = ("factory", "mock", "handler", "evaluator", "script", "judge", "invoker")
FILES = {
    "agents.py": AGENTS, "handlers/handled.py": HANDLER, "mockmod.py": MOCK, "evals.py": EVALS,
    "scripts_mod.py": SCRIPT, "judgemod.py": JUDGE, "invmod.py": INVOKER, "pyproject.toml": PYPROJECT,
    "prompts/system.md": "You are the agent.\n", "docs/a.txt": "a\n", "data/settings.txt": "s\n", "notes/n.md": "n\n",
    "dodo.py": "from open_agent_compiler.tasks import DOIT_CONFIG, task_compile, task_test  # noqa: F401\n",
    **{f"{kind}_helper.py": "N = 1\n" for kind in KINDS},
    **{f"data/{kind}.txt": "1\n" for kind in KINDS if kind != "factory"},
}
# where each kind's code lives, and how `oac test` runs the test that depends on it
MODULE = {"factory": "agents.py", "mock": "mockmod.py", "handler": "handlers/handled.py", "evaluator": "evals.py",
          "script": "scripts_mod.py", "judge": "judgemod.py", "invoker": "invmod.py"}
RUN = {
    "mock": ("--filter", "mock-test"),
    "handler": ("--filter", "handler-test"),
    "evaluator": ("--filter", "evaluator-test"),
    "script": ("--filter", "agent-test", "--invoker", "scripted"),
    "judge": ("--filter", "judge-test", "--judge", "judgemod:make"),
    "invoker": ("--filter", "agent-test", "--invoker", "invmod:make"),
}
DATA = {kind: f"data/{kind}.txt" for kind in KINDS if kind != "factory"} | {"factory": "prompts/system.md"}


def guard_project(root: Path) -> Project:
    return Project.of(root, FILES)
