"""run_agent_test with the scripted invoker, in process: session state across turns, evaluators per turn and per
conversation, timeouts, and a user's own invoker."""

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from open_agent_compiler import (AgentDefinition, AgentHeader, AgentRegistry, AgentTest, BashToolPermission,
                                 CompilationConfig, MockProfile, MockResponse, PathOrderEvaluator, SubstringEvaluator,
                                 TemplateSlot, TemplateTree, ToolCalledEvaluator, ToolDefinition, ToolDefinitionHeader,
                                 ToolDefinitionLogicBash, Turn)
from open_agent_compiler.errors import OacError
from open_agent_compiler.testing.agent_runner import run_agent_test
from open_agent_compiler.testing.discovery import discover
from open_agent_compiler.testing.invokers.protocol import InvokerInfo, TurnResult
from open_agent_compiler.testing.invokers.script import ScriptedModel, call, reply
from open_agent_compiler.testing.invokers.scripted import ScriptedInvoker
from open_agent_compiler.testing.invokers.select import load_invoker
from open_agent_compiler.testing.runner import NOT_RUNNABLE, RunSettings, run_case


def tool(name: str, mock: MockResponse | None = None) -> ToolDefinition:
    return ToolDefinition(header=ToolDefinitionHeader(name=name, description=name),
                          bash_tool=ToolDefinitionLogicBash(permission_bash=BashToolPermission(
                              allowed_commands=[f"run-{name} *"])), mock=mock)


def resolved_with(test: AgentTest, tools: list[ToolDefinition], profile: MockProfile | None = None):
    reg = AgentRegistry()
    agent = AgentDefinition(header=AgentHeader(agent_id="a", name="a", description="d"), system_prompt="p",
                            extra_tools=tools, agent_tests=[test])
    reg.register_agent("a", agent)
    reg.register_template(TemplateTree(name="t", slots=[TemplateSlot(name="primary", default_agent_id="a")]))
    reg.create_compilation_config(CompilationConfig(name="c", template_name="t"))
    if profile is not None:
        reg.register_mock_profile(profile)
    resolved = reg.resolve_config("c")
    case = [c for c in discover(resolved) if c.kind == "agent"][0]
    return case, resolved


def run(test, tools, script, profile=None, **settings):
    case, resolved = resolved_with(test, tools, profile)
    invoker = ScriptedInvoker({test.name: script}, "t:SCRIPTS", "digest")
    options = RunSettings(project_root=Path("."), build_dir=Path("."), invoker=invoker, **settings)
    return run_case(case, resolved, options)


COUNTER = tool("count", MockResponse(kind="sequence", sequence=({"n": 1}, {"n": 2}, {"n": 3})))


def counting_turns(count: int) -> ScriptedModel:
    step = [call("count"), lambda view: reply(f"n={view.last_output['n']}")]
    return ScriptedModel(turns=[step] * count)


def test_mock_state_carries_across_turns_of_one_session() -> None:
    test = AgentTest(name="t", turns=tuple(Turn(prompt=f"p{i}", evaluators=(SubstringEvaluator(needle=f"n={i}"),))
                                           for i in (1, 2, 3)))
    outcome = run(test, [COUNTER], counting_turns(3))
    assert outcome.status == "pass", outcome.first_failure()
    # a fresh session per turn would answer n=1 three times
    assert [r.evidence.endswith(f"n={i}") for i, r in enumerate(outcome.evidence, 1)] == [True] * 3


def test_each_test_gets_a_fresh_session() -> None:
    test = AgentTest(name="t", prompt="p", evaluators=(SubstringEvaluator(needle="n=1"),))
    for _ in range(2):
        assert run(test, [COUNTER], counting_turns(1)).status == "pass"


def test_turn_evaluators_see_only_their_turn_and_test_evaluators_the_whole_conversation() -> None:
    test = AgentTest(name="t", turns=(
        Turn(prompt="a", evaluators=(ToolCalledEvaluator(tool_name="count", min_count=1),)),
        Turn(prompt="b", evaluators=(ToolCalledEvaluator(tool_name="count", min_count=2),)),
    ), evaluators=(ToolCalledEvaluator(tool_name="count", min_count=2), PathOrderEvaluator(steps=("count", "count"))))
    outcome = run(test, [COUNTER], counting_turns(2))
    results = {r.name: r.passed for r in outcome.evidence}
    assert results == {"turn 1: tool_called": True, "turn 2: tool_called": False, "tool_called": True,
                       "path_order": True}
    assert outcome.status == "fail"


def test_expected_calls_must_come_in_order() -> None:
    other = tool("other", MockResponse(kind="echo"))
    test = AgentTest(name="t", prompt="p", expected_tool_calls=("other", "count"))
    script = ScriptedModel(turns=[[call("count"), call("other", x=1), reply("done")]])
    outcome = run(test, [COUNTER, other], script)
    assert outcome.status == "fail"
    assert outcome.first_failure() == ("turn 1: expected_tool_calls: expected call 'count' after 'other' was not "
                                       "made; trajectory: count → other")


def test_timeout_fails_the_test() -> None:
    test = AgentTest(name="t", prompt="p", timeout_s=1e-9)
    outcome = run(test, [COUNTER], counting_turns(1))
    assert outcome.status == "fail" and "timed out after" in outcome.first_failure()


def test_broken_script_and_broken_mock_are_fails_not_crashes() -> None:
    test = AgentTest(name="t", prompt="p")
    outcome = run(test, [COUNTER], ScriptedModel(function=lambda view: 1 / 0))
    assert outcome.status == "fail" and "turn 1: script, turn 1 step 1 raised ZeroDivisionError" in outcome.first_failure()
    broken = tool("broken", MockResponse(kind="callable", callable_spec="no_such_module_xyz:f"))
    outcome = run(AgentTest(name="t", prompt="p", expected_tool_calls=("broken",)), [broken],
                  ScriptedModel(turns=[[call("broken"), lambda view: reply(str(view.tool_results[0].error))]]))
    assert outcome.status == "pass"  # the call happened; its error is what the model saw


def test_hermetic_run_never_reaches_a_real_handler() -> None:
    real = tool("real")
    script = ScriptedModel(turns=[[call("real"), lambda view: reply(view.tool_results[0].error or "ran")]])
    test = AgentTest(name="t", prompt="p", evaluators=(SubstringEvaluator(needle="--hermetic"),))
    assert run(test, [real], script, hermetic=True).status == "pass"


def test_no_invoker_keeps_the_seed_message() -> None:
    case, resolved = resolved_with(AgentTest(name="t", prompt="p"), [COUNTER])
    outcome = run_case(case, resolved, RunSettings(project_root=Path("."), build_dir=Path(".")))
    assert outcome.status == "not_runnable" and outcome.skip_reason == NOT_RUNNABLE


class EchoInvoker:
    """A user's own invoker: answers every prompt with itself, calling no tools."""

    info = InvokerInfo(name="echo", version="1")

    @contextmanager
    def session(self, agent, test, dispatcher, deadline) -> Iterator["EchoInvoker"]:
        yield self

    def turn(self, index: int, prompt: str) -> TurnResult:
        return TurnResult(text=f"{index}:{prompt}")


def make_echo_invoker() -> EchoInvoker:
    return EchoInvoker()


def test_a_users_invoker_from_module_factory(tmp_path: Path) -> None:
    (tmp_path / "my_invoker.py").write_text("from test_agent_runner import EchoInvoker\n"
                                            "def make():\n    return EchoInvoker()\n"
                                            "def broken():\n    return 42\n")
    invoker = load_invoker("my_invoker:make", root=tmp_path, factory="agents:registry")
    assert invoker is not None and invoker.info.key() == "echo version=1"
    test = AgentTest(name="t", turns=(Turn(prompt="x"), Turn(prompt="y", evaluators=(SubstringEvaluator(needle="2:y"),))))
    case, resolved = resolved_with(test, [COUNTER])
    outcome = run_agent_test(case, resolved, RunSettings(project_root=tmp_path, build_dir=tmp_path), invoker)
    assert outcome.status == "pass"
    with pytest.raises(OacError, match="returned a int"):
        load_invoker("my_invoker:broken", root=tmp_path, factory="agents:registry")


UPPER_HANDLER = '''
from pydantic import BaseModel
from open_agent_compiler import ScriptTool


class In(BaseModel):
    q: str


class Out(BaseModel):
    answer: str


class Upper(ScriptTool[In, Out]):
    name = "upper"

    def execute(self, input: In) -> Out:
        return Out(answer=input.q.upper())
'''


def test_a_tool_without_mock_runs_its_real_handler_unless_hermetic(tmp_path: Path) -> None:
    (tmp_path / "upper.py").write_text(UPPER_HANDLER)
    upper = tool("upper").model_copy(update={"handler_script": "upper.py"})
    script = ScriptedModel(turns=[[call("upper", q="abc"),
                                   lambda view: reply(str(view.last_output or view.tool_results[0].error))]])
    test = AgentTest(name="t", prompt="p", evaluators=(SubstringEvaluator(needle="'answer': 'ABC'"),))
    case, resolved = resolved_with(test, [upper])
    invoker = ScriptedInvoker({"t": script}, "t:SCRIPTS", "digest")
    real = run_case(case, resolved, RunSettings(project_root=tmp_path, build_dir=tmp_path, invoker=invoker))
    assert real.status == "pass", real.first_failure()
    hermetic = run_case(case, resolved, RunSettings(project_root=tmp_path, build_dir=tmp_path, invoker=invoker,
                                                    hermetic=True))
    assert hermetic.status == "fail" and "--hermetic: tool 'upper' has no mock" in hermetic.first_failure()


def test_test_level_evaluators_see_every_turns_text_not_only_the_last() -> None:
    test = AgentTest(name="t", turns=(Turn(prompt="a"), Turn(prompt="b"), Turn(prompt="c")),
                     evaluators=(SubstringEvaluator(needle="FIRST-TURN"), SubstringEvaluator(needle="MIDDLE-TURN"),
                                 SubstringEvaluator(needle="LAST-TURN")))
    script = ScriptedModel(turns=[[reply("FIRST-TURN")], [reply("MIDDLE-TURN")], [reply("LAST-TURN")]])
    outcome = run(test, [COUNTER], script)
    assert outcome.status == "pass", outcome.first_failure()
    assert [r.passed for r in outcome.evidence] == [True, True, True]


def test_a_script_calling_a_tool_fails_when_the_agent_has_no_tool_at_all() -> None:
    test = AgentTest(name="t", prompt="p")
    outcome = run(test, [], ScriptedModel(turns=[[call("count"), reply("done")]]))
    assert outcome.status == "fail"
    assert "script calls tool 'count', which agent 'primary' cannot call (it can: none)" in outcome.first_failure()


def test_a_script_sees_the_earlier_turns_in_order_user_then_assistant() -> None:
    def history(view):
        return reply(" | ".join(f"{m.role}:{m.text}" for m in view.conversation) or "none")

    test = AgentTest(name="t", turns=(Turn(prompt="p1"), Turn(prompt="p2"),
                                      Turn(prompt="p3", evaluators=(SubstringEvaluator(
                                          needle="user:p1 | assistant:none | user:p2 | assistant:user:p1"),))))
    outcome = run(test, [COUNTER], ScriptedModel(turns=[[history]] * 3))
    assert outcome.status == "pass", outcome.first_failure()
