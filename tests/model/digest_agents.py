"""A small resolved agent whose every `AnyValue`/`FAITHFUL` position can be set: for the content-digest tests."""

from typing import Any

from open_agent_compiler import (
    AgentDefinition, AgentHeader, EqualsEvaluator, JsonPathEvaluator, MockResponse, ModelParameters,
    ToolCalledEvaluator, ToolDefinition, ToolDefinitionHeader, ToolTest,
)
from open_agent_compiler.model.core.evaluator import Evaluator
from open_agent_compiler.model.core.test_model import AgentTest
from open_agent_compiler.model.registry import ResolvedAgent
from open_agent_compiler.model.core.tool import BashToolPermission, ToolDefinitionLogicBash, ToolDefinitionLogicJson
from open_agent_compiler.model.core.tool import JsonToolPermission

_UNSET: Any = object()

# Where a value can go: the name each test uses, and what it changes in `agent_with`.
POSITIONS = ("fixed_output", "sequence", "input", "expected", "json_path_expected", "with_args_subset",
             "prompt_sections", "input_schema")


def agent_with(position: str | None = None, value: Any = _UNSET, *, evaluators: list[Evaluator] | None = None,
               temperature: float | None = 0.2, timeout_s: float = 60.0) -> ResolvedAgent:
    """A freshly validated agent (no digest cached) with `value` at `position` (one of POSITIONS)."""
    at = (lambda name, default: value if position == name else default)  # noqa: E731
    evaluators = evaluators if evaluators is not None else [
        EqualsEvaluator(field="status", expected=at("expected", "ok")),
        JsonPathEvaluator(path="tool", expected=at("json_path_expected", "t0")),
    ]
    mock = (MockResponse(kind="echo", fixed_output=value) if position == "fixed_output" else
            MockResponse(kind="sequence", sequence=(value, "last")) if position == "sequence" else
            MockResponse(fixed_output={"status": "ok"}))
    json_tool = ToolDefinitionLogicJson(permission_json=JsonToolPermission(allowed_commands=["t0 *"]),
                                        input_schema={"type": "object", "x": value} if position == "input_schema"
                                        else {"type": "object"})
    tool = ToolDefinition(
        header=ToolDefinitionHeader(name="t0", description="a tool"),
        bash_tool=ToolDefinitionLogicBash(permission_bash=BashToolPermission(allowed_commands=["t0 *"])),
        json_tool=json_tool, mock=mock,
        tool_tests=[ToolTest(name="t0-test", input={"q": at("input", "x")}, evaluators=evaluators)])
    agent_test = AgentTest(name="a-test", prompt="go", timeout_s=timeout_s, evaluators=[
        ToolCalledEvaluator(tool_name="t0", with_args_subset={"q": at("with_args_subset", "x")})])
    sections = [{"content": "You are an agent.", "extra": at("prompt_sections", None)}]
    definition = AgentDefinition(header=AgentHeader(agent_id="a", name="a"), extra_tools=[tool],
                                 prompt_sections=sections, agent_tests=[agent_test])
    parameters = ModelParameters(model_name="m", temperature=temperature)
    return ResolvedAgent(slot="primary", compiled_name="a", primary=True, agent_name="a", definition=definition,
                         model_parameters=parameters, subagents=(), tools=())
