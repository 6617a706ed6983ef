"""A JSON tool's declared input_schema and output_schema hold in its tool tests: a violation is a FAIL naming the
field. Plus the validator's subset on its own."""

import re
import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cli_project import oac

from open_agent_compiler.testing.schema_check import first_violation, violations

TIMING = re.compile(r" \[(?:capability|tool|agent)(?: \d+\.\d{3}s)?\]$")  # the kind/duration suffix of result lines

AGENTS = '''
from pydantic import BaseModel
from open_agent_compiler import (
    AgentDefinition, AgentHeader, AgentRegistry, CompilationConfig, EqualsEvaluator, MockResponse, TemplateSlot,
    TemplateTree, ToolDefinition, ToolDefinitionHeader, ToolTest,
)
from open_agent_compiler.model.core.tool import JsonToolPermission, ToolDefinitionLogicJson

INPUT = {"type": "object", "required": ["q"], "properties": {"q": {"type": "string", "minLength": 1}},
         "additionalProperties": False}
OUTPUT = {"type": "object", "required": ["items"], "properties": {"items": {"type": "array", "items": {
    "type": "object", "required": ["id"], "properties": {"id": {"type": "integer", "minimum": 0}}}}}}


def tool(name, mock, tests, handler=None):
    return ToolDefinition(
        header=ToolDefinitionHeader(name=name, description="Finds items."),
        json_tool=ToolDefinitionLogicJson(permission_json=JsonToolPermission(allowed_commands=[f"python3 {name}.py"]),
                                          input_schema=INPUT, output_schema=OUTPUT),
        mock=mock, handler_script=handler, tool_tests=tests)


def registry():
    good = {"items": [{"id": 1}, {"id": 2}]}
    bad = {"items": [{"id": 1}, {"id": 2}, {"id": "3"}]}
    tools = [
        tool("finder", MockResponse(kind="fixed", fixed_output=good), [
            ToolTest(name="conforms", input={"q": "a"}, evaluators=(EqualsEvaluator(field="items", expected=good["items"]),)),
            ToolTest(name="input-misses-q", input={"query": "a"}),
            ToolTest(name="input-q-empty", input={"q": ""}),
        ]),
        tool("broken-mock", MockResponse(kind="fixed", fixed_output=bad), [ToolTest(name="mock-breaks-output", input={"q": "a"})]),
        tool("broken-handler", None, [ToolTest(name="handler-breaks-output", input={"q": "a"})], handler="handler.py"),
    ]
    agent = AgentDefinition(header=AgentHeader(agent_id="a", name="a", description="d"), extra_tools=tools)
    reg = AgentRegistry()
    reg.register_agent("a", agent)
    reg.register_template(TemplateTree(name="tpl", slots=[TemplateSlot(name="primary", default_agent_id="a")]))
    reg.create_compilation_config(CompilationConfig(name="prod", template_name="tpl"))
    return reg
'''

HANDLER = '''
from pydantic import BaseModel
from open_agent_compiler import ScriptTool


class In(BaseModel):
    q: str


class Out(BaseModel):
    items: list[dict]


class BrokenHandler(ScriptTool[In, Out]):
    name = "broken-handler"
    description = "Returns an item without an id."

    def execute(self, input: In) -> Out:
        return Out(items=[{"id": 0}, {"name": "no id"}])
'''


def test_schema_violations_fail_naming_the_field(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / "schema_agents.py").write_text(AGENTS)
    (tmp_path / "handler.py").write_text(HANDLER)
    done = oac(tmp_path, "test", "schema_agents:registry", "--config", "prod", "-v")
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stdout + done.stderr
    lines = [TIMING.sub("", line) for line in done.stdout.splitlines()]
    assert "  pass 'conforms'" in lines
    assert ("  FAIL 'input-misses-q': input_schema: test input breaks tool 'finder''s input_schema: "
            "$.q: required field is missing") in lines
    assert ("  FAIL 'input-q-empty': input_schema: test input breaks tool 'finder''s input_schema: "
            "$.q: shorter than minLength 1 (length 0)") in lines
    assert ("  FAIL 'mock-breaks-output': output_schema: mock tool.mock output breaks tool 'broken-mock''s "
            "output_schema: $.items[2].id: expected integer, got string \"3\"") in lines
    assert ("  FAIL 'handler-breaks-output': output_schema: handler output breaks tool 'broken-handler''s "
            "output_schema: $.items[1].id: required field is missing") in lines
    records = {json.loads(line)["test_name"]: json.loads(line) for line in
               (tmp_path / ".oac" / "test_results.jsonl").read_text().splitlines()}
    assert records["mock-breaks-output"]["passed"] is False
    assert records["mock-breaks-output"]["evidence"][0]["name"] == "output_schema"


SCHEMA = {
    "type": "object",
    "required": ["id", "tags"],
    "properties": {
        "id": {"type": "integer", "minimum": 1, "maximum": 9},
        "name": {"type": ["string", "null"], "maxLength": 3},
        "tags": {"type": "array", "items": {"enum": ["a", "b"]}},
        "kind": {"const": "x"},
        "size": {"anyOf": [{"type": "integer"}, {"type": "string", "minLength": 2}]},
        "one": {"oneOf": [{"type": "integer"}, {"type": "number", "minimum": 5}]},
        "all": {"allOf": [{"type": "number"}, {"exclusiveMaximum": 3}]},
        "odd key": {"type": "boolean"},
        "refd": {"$ref": "#/nowhere", "pattern": "^z"},
    },
    "additionalProperties": {"type": "string"},
}
GOOD = {"id": 3, "name": None, "tags": ["a", "b"], "kind": "x", "size": "xl", "one": 7.5, "all": 2, "odd key": True,
        "refd": "anything", "extra": "text"}


@pytest.mark.parametrize(("change", "expected"), [
    ({}, None),
    ({"id": 0}, "$.id: 0 is not >= 1 (minimum)"),
    ({"id": 10}, "$.id: 10 is not <= 9 (maximum)"),
    ({"id": True}, "$.id: expected integer, got boolean true"),
    ({"id": 2.0}, None),  # 2.0 is an integer in JSON
    ({"id": 2.5}, "$.id: expected integer, got number 2.5"),
    ({"name": "long"}, "$.name: longer than maxLength 3 (length 4)"),
    ({"name": 5}, "$.name: expected string or null, got integer 5"),
    ({"tags": ["a", "c"]}, '$.tags[1]: "c" is not one of ["a", "b"]'),
    ({"tags": "a"}, "$.tags: expected array, got string \"a\""),
    ({"kind": "y"}, '$.kind: must be "x", got "y"'),
    ({"size": "s"}, "$.size: matches none of anyOf (2 options); closest: $.size: expected integer, got string \"s\""),
    ({"one": 7}, "$.one: matches 2 of oneOf's options, exactly one allowed"),
    ({"all": 3}, "$.all: 3 is not < 3 (exclusiveMaximum)"),
    ({"odd key": 1}, '$["odd key"]: expected boolean, got integer 1'),
    ({"extra": 1}, "$.extra: expected string, got integer 1"),
    ({"refd": 5}, None),  # unknown keywords ($ref, pattern) are ignored, never failed
])
def test_the_subset(change: dict, expected: str | None) -> None:
    assert first_violation(GOOD | change, SCHEMA) == expected


def test_required_and_closed_objects() -> None:
    value = {"tags": [], "zzz": 1}
    assert list(violations(value, SCHEMA | {"additionalProperties": False})) == [
        "$.id: required field is missing", "$.zzz: field not allowed (additionalProperties is false)"]
    assert first_violation(1, False) == "$: no value is allowed here (schema false)"
    assert first_violation({"anything": [1, {}]}, True) is None
    assert first_violation("1", {"type": "number"}) == '$: expected number, got string "1"'
    assert first_violation(None, {"type": "null"}) is None and first_violation(1, {"const": 1.0}) is None
    assert first_violation(True, {"const": 1}) == "$: must be 1, got true"


@given(st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
                    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3),
                    max_leaves=10))
def test_a_value_always_matches_the_empty_schema_and_never_the_false_one(value: object) -> None:
    assert first_violation(value, {}) is None
    assert first_violation(value, False) is not None


COUNTING_AGENTS = AGENTS.replace(
    'tool("broken-handler", None, [ToolTest(name="handler-breaks-output", input={"q": "a"})], handler="handler.py"),',
    'tool("broken-handler", None, [ToolTest(name="handler-breaks-output", input={"q": "a"}), '
    'ToolTest(name="handler-bad-input", input={"q": 7})], handler="handler.py"),')
COUNTING_HANDLER = HANDLER.replace("    q: str\n", "    q: str | int\n").replace("    def execute(self, input: In) -> Out:\n",
                                   "    def execute(self, input: In) -> Out:\n"
                                   "        with open('executions.log', 'a') as log:\n"
                                   "            log.write(repr(input.q) + '\\n')\n")


def test_a_handler_is_never_started_for_an_input_that_breaks_the_schema(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / "schema_agents.py").write_text(COUNTING_AGENTS)
    (tmp_path / "handler.py").write_text(COUNTING_HANDLER)
    done = oac(tmp_path, "test", "schema_agents:registry", "--config", "prod", "--filter", "handler-")
    assert "  FAIL 'handler-bad-input': input_schema: test input breaks tool 'broken-handler''s input_schema: " \
           "$.q: expected string, got integer 7" in [TIMING.sub("", line) for line in done.stdout.splitlines()]
    # started early by the prefetch, the handler would have run (the schema says q is a string; 7 was sent)
    assert (tmp_path / "executions.log").read_text().splitlines() == ["'a'"]
