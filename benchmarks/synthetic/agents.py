"""Synthetic registry for `oac test` benchmarks (copied into each generated project by benchmarks/generate.py).

The shape comes from `bench_spec.json` next to this file, so editing one agent means changing the spec, never
this module. Only the public API both implementations share is used, with keyword arguments only. Where the two
models disagree on which fields exist (script definitions), a field is passed only if the model declares it;
see `_declared`.

Per agent (normal suite): two capability tests and three tool tests —
  tool0: fixed mock (or, for every `handler_every`-th agent, a JSON tool with a real ScriptTool handler),
  tool1: sequence mock, tool2: default mock overridden by a MockProfile (one shared profile, or one per agent).
Slow suite (`slow_ms` > 0): five tools per agent, each mocked by `bench_mocks:slow` (~slow_ms per call),
no capability tests.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from open_agent_compiler import (
    AgentDefinition,
    AgentHeader,
    AgentRegistry,
    BashToolPermission,
    CapabilityTest,
    CompilationConfig,
    EqualsEvaluator,
    JsonPathEvaluator,
    JsonToolPermission,
    MockProfile,
    MockResponse,
    ModelParameters,
    PermissionAbsentEvaluator,
    ScriptDefinition,
    TemplateSlot,
    TemplateTree,
    ToolDefinition,
    ToolDefinitionHeader,
    ToolDefinitionLogicBash,
    ToolDefinitionLogicJson,
    ToolScriptDefinition,
    ToolTest,
)

HERE = Path(__file__).resolve().parent
SPEC: dict[str, Any] = json.loads((HERE / "bench_spec.json").read_text(encoding="utf-8"))
MODEL = ModelParameters(model_name="provider/model-x", temperature=0.0)


def _declared(model: type, **optional: Any) -> dict[str, Any]:
    """The subset of `optional` keyword arguments that `model` declares as fields.

    One implementation requires `ToolScriptDefinition.paths` and `ScriptDefinition.source_file_type`; the other
    has no such fields and rejects unknown keywords. Only these known divergences go through here (and `_sequence_items`).
    """
    fields = getattr(model, "model_fields", {})
    return {key: value for key, value in optional.items() if key in fields}


def _sequence_items(*outputs: dict[str, Any]) -> tuple[Any, ...]:
    """Items of a `sequence` mock whose call N returns `outputs[N]`.

    One implementation types the items as `MockResponse` (and resolves each), the other returns each item as it
    is. Wrap only where the declared item type is `MockResponse`, so both return the same outputs.
    """
    if "MockResponse" in str(MockResponse.model_fields["sequence"].annotation):
        return tuple(MockResponse(kind="fixed", fixed_output=output) for output in outputs)
    return outputs


def _header(name: str, revision: str) -> ToolDefinitionHeader:
    return ToolDefinitionHeader(
        name=name,
        description=f"Synthetic tool {name}.",
        usage_explanation_long=f"Run {name} with a query.{revision}",
        usage_explanation_short=name,
        rules=[],
    )


def _bash(name: str) -> ToolDefinitionLogicBash:
    return ToolDefinitionLogicBash(
        permission_bash=BashToolPermission(
            tool_name="bash", value="allow", allowed_commands=[f"uv run scripts/{name}.py *"]
        ),
        positive_examples=[f"uv run scripts/{name}.py --q x"],
        negative_examples=[],
        mode_specific_rules=[],
    )


def _fixed_tool(name: str, revision: str) -> ToolDefinition:
    return ToolDefinition(
        header=_header(name, revision),
        bash_tool=_bash(name),
        mock=MockResponse(kind="fixed", fixed_output={"tool": name, "status": "ok"}),
        tool_tests=[
            ToolTest(
                name=f"{name}-fixed",
                input={"q": "x"},
                evaluators=(
                    EqualsEvaluator(field="status", expected="ok"),
                    JsonPathEvaluator(path="tool", expected=name),
                ),
            )
        ],
    )


def _handler_tool(name: str, revision: str) -> ToolDefinition:
    source = HERE / "handlers" / (name.replace("-", "_") + ".py")
    script = ScriptDefinition(
        target_file_path=f"scripts/{source.name}",
        source_file_path=str(source),
        script_contents=None,
        **_declared(ScriptDefinition, source_file_type="python"),
    )
    return ToolDefinition(
        header=_header(name, revision),
        json_tool=ToolDefinitionLogicJson(
            permission_json=JsonToolPermission(tool_name=name, value="allow"),
            positive_examples=[],
            negative_examples=[],
            mode_specific_rules=[],
            tool_scripts=[ToolScriptDefinition(scripts=[script], **_declared(ToolScriptDefinition, paths=None))],
        ),
        tool_tests=[
            ToolTest(
                name=f"{name}-handler",
                input={"q": "x"},
                evaluators=(
                    EqualsEvaluator(field="status", expected="ok"),
                    JsonPathEvaluator(path="echo", expected="x"),
                ),
            )
        ],
    )


def _sequence_tool(name: str, revision: str) -> ToolDefinition:
    # A single tool-test call resolves the first item of the sequence.
    return ToolDefinition(
        header=_header(name, revision),
        bash_tool=_bash(name),
        mock=MockResponse(kind="sequence", sequence=_sequence_items({"batch": [1, 2], "n": 0}, {"batch": [], "n": 1})),
        tool_tests=[
            ToolTest(
                name=f"{name}-seq",
                input={"q": "y"},
                evaluators=(JsonPathEvaluator(path="batch.1", expected=2),),
            )
        ],
    )


def _file_mock_tool(name: str, revision: str) -> ToolDefinition:
    # `mock_files_every`: the mock reads mocks/<name>.json when the test calls it (a file only the test reads).
    return ToolDefinition(
        header=_header(name, revision),
        bash_tool=_bash(name),
        mock=MockResponse(kind="callable", callable_spec="bench_file_mocks:lookup"),
        tool_tests=[
            ToolTest(
                name=f"{name}-seq",
                input={"tool": name},
                evaluators=(JsonPathEvaluator(path="batch.1", expected=2),),
            )
        ],
    )


def _profile_tool(name: str, revision: str, profile: str) -> ToolDefinition:
    return ToolDefinition(
        header=_header(name, revision),
        bash_tool=_bash(name),
        mock=MockResponse(kind="fixed", fixed_output={"text": "default"}),
        tool_tests=[
            ToolTest(
                name=f"{name}-profile",
                input={"q": "z"},
                mock_profile=profile,
                evaluators=(EqualsEvaluator(field="text", expected=f"CI-{name}"),),
            )
        ],
    )


def _slow_tool(name: str, revision: str) -> ToolDefinition:
    return ToolDefinition(
        header=_header(name, revision),
        bash_tool=_bash(name),
        mock=MockResponse(kind="callable", callable_spec="bench_mocks:slow"),
        tool_tests=[
            ToolTest(
                name=f"{name}-slow",
                input={"q": name},
                evaluators=(EqualsEvaluator(field="echo", expected=name),),
            )
        ],
    )


def _tools(index: int, revision: str, profile: str) -> list[ToolDefinition]:
    if SPEC["slow_ms"] > 0:
        return [_slow_tool(f"a{index}-tool{j}", revision) for j in range(5)]
    every = SPEC["handler_every"]
    first = _handler_tool if every and index % every == every - 1 else _fixed_tool
    files = SPEC.get("mock_files_every", 0)
    second = _file_mock_tool if files and index % files == files - 1 else _sequence_tool
    return [
        first(f"a{index}-tool0", revision),
        second(f"a{index}-tool1", revision),
        _profile_tool(f"a{index}-tool2", revision, profile),
    ]


def _capability_tests(index: int, tools: list[ToolDefinition]) -> list[CapabilityTest]:
    if SPEC["slow_ms"] > 0:
        return []
    patterns = tuple(
        command for tool in tools if tool.bash_tool is not None for command in tool.bash_tool.permission_bash.allowed_commands
    )
    return [
        CapabilityTest(name=f"agent-{index}-bash", must_have_bash_patterns=patterns),
        CapabilityTest(
            name=f"agent-{index}-no-write",
            evaluators=(
                PermissionAbsentEvaluator(permission_key="write"),
                PermissionAbsentEvaluator(permission_key="edit"),
            ),
        ),
    ]


def _agent(index: int, profile: str) -> AgentDefinition:
    edit = SPEC["edits"].get(str(index))
    revision = f" (revision {edit})" if edit else ""
    tools = _tools(index, revision, profile)
    return AgentDefinition(
        header=AgentHeader(agent_id=f"agent-{index}", name=f"agent-{index}", description=f"Synthetic agent {index}."),
        usage_explanation_long=f"Synthetic agent {index}.",
        usage_explanation_short=f"agent {index}",
        system_prompt=f"You are synthetic agent {index}.{revision}",
        extra_tools=tools,
        capability_tests=_capability_tests(index, tools),
    )


def registry() -> AgentRegistry:
    reg = AgentRegistry()
    shared = SPEC["profiles"] == "shared"
    shared_responses: dict[str, MockResponse] = {}
    slots: list[TemplateSlot] = []
    for index in range(SPEC["agents"]):
        profile = "ci" if shared else f"ci-{index}"
        agent = _agent(index, profile)
        responses = {
            tool.header.name: MockResponse(kind="fixed", fixed_output={"text": f"CI-{tool.header.name}"})
            for tool in agent.extra_tools
            if tool.header.name.endswith("-tool2") and SPEC["slow_ms"] == 0
        }
        if shared:
            shared_responses.update(responses)
        elif responses:
            reg.register_mock_profile(MockProfile(name=profile, responses=responses))
        agent_id = reg.register_agent(f"agent-{index}", agent, MODEL)
        slots.append(TemplateSlot(name="primary" if index == 0 else f"agent-{index}", default_agent_id=agent_id))
    if shared and shared_responses:
        reg.register_mock_profile(MockProfile(name="ci", responses=shared_responses))
    reg.register_template(TemplateTree(name="tpl", slots=slots))
    reg.create_compilation_config(CompilationConfig(name="prod", template_name="tpl"))
    return reg
