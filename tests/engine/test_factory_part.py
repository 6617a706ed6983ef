"""The `factory` key part (what the registry factory read) reaches exactly the tests whose project code runs in
the engine, where a global the factory filled can answer: a callable mock, a project evaluator, a judge. A real
handler runs in a process forked from the zygote, started before the registry loaded, so it cannot see such a
global: editing a prompt file the factory reads must not re-run every handler test."""

from engine_project import Project

AGENTS = '''
from pathlib import Path
from open_agent_compiler import (
    AgentDefinition, AgentHeader, AgentRegistry, CompilationConfig, EqualsEvaluator, MockResponse, TemplateSlot,
    TemplateTree, ToolDefinition, ToolDefinitionHeader, ToolTest,
)

SETTING = None


def tool(name, **kw):
    return ToolDefinition(header=ToolDefinitionHeader(name=name, description=name), **kw,
                          tool_tests=[ToolTest(name=name + "-t", input={},
                                               evaluators=(EqualsEvaluator(field="n", expected=1),))])


def registry():
    global SETTING
    SETTING = Path("prompts/p.md").read_text()  # the prompt, and a global a callable mock may answer from
    agent = AgentDefinition(header=AgentHeader(agent_id="a", name="a", description="d"), system_prompt=SETTING,
                            extra_tools=[tool("handled", handler_script="handlers/handled.py"),
                                         tool("mocked", mock=MockResponse(kind="callable",
                                                                          callable_spec="mockmod:answer"))])
    reg = AgentRegistry()
    reg.register_agent("a", agent)
    reg.register_template(TemplateTree(name="tpl", slots=[TemplateSlot(name="primary", default_agent_id="a")]))
    reg.create_compilation_config(CompilationConfig(name="prod", template_name="tpl"))
    return reg
'''

HANDLER = '''
from pydantic import BaseModel
from open_agent_compiler import ScriptTool


class E(BaseModel):
    pass


class N(BaseModel):
    n: int


class Handled(ScriptTool[E, N]):
    name = "handled"

    def execute(self, input):
        return N(n=1)
'''

MOCK = '''
import agents


def answer(payload):
    return {"n": 1 if agents.SETTING.startswith("You") else 2}
'''


def test_a_file_the_factory_reads_reruns_the_callable_mock_test_not_the_handler_test(tmp_path) -> None:
    proj = Project.of(tmp_path / "p", {"agents.py": AGENTS, "handlers/handled.py": HANDLER, "mockmod.py": MOCK,
                                        "prompts/p.md": "You help.\n",
                                        "pyproject.toml": '[tool.oac]\nfactory = "agents:registry"\nconfig = "prod"\n'})
    first = proj.oac("test", "-v", check_code=0)
    assert "pass 'handled-t'" in first.stdout and "pass 'mocked-t'" in first.stdout, first.stdout
    proj.write("prompts/p.md", "Be brief.\n")  # the mock now answers 2: its test must run, and fail
    again = proj.oac("test", "--explain", check_code=1)
    assert "skip 'handled-t'" in again.stdout, again.stdout
    ran = next(line for line in again.stdout.splitlines() if "'mocked-t': changed:" in line)
    assert "factory" in ran and "FAIL 'mocked-t'" in again.stdout, again.stdout
    forced = proj.oac("test", "--force", check_code=1)  # the oracle: what was skipped passes when forced
    assert "handled-t" not in "".join(line for line in forced.stdout.splitlines() if "FAIL" in line), forced.stdout
