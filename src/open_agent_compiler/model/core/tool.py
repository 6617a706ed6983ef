"""Tool definitions: what a tool is, how an agent may invoke it, and how it is mocked and tested."""

from typing import Literal

from pydantic import Field, model_validator

from open_agent_compiler.model.core.base import Frozen
from open_agent_compiler.model.core.mock import MockResponse
from open_agent_compiler.model.core.test_model import ToolTest

PermissionValue = Literal["allow", "ask", "deny"]


class BashToolPermission(Frozen):
    """Each allowed command is a bash permission pattern (glob, `*` = anything) granted with `value`."""

    tool_name: str = "bash"
    value: PermissionValue = "allow"
    allowed_commands: list[str] = Field(default_factory=list)


class JsonToolPermission(Frozen):
    """A JSON tool is a script fed JSON on stdin; its command patterns are granted like bash patterns."""

    tool_name: str = "bash"
    value: PermissionValue = "allow"
    allowed_commands: list[str] = Field(default_factory=list)


class ScriptDefinition(Frozen):
    """One file the compiler writes under the target: copied from `source_file_path` or given inline."""

    target_file_path: str
    source_file_path: str | None = None
    source_file_type: Literal["python", "javascript", "typescript"] | None = None  # None: python
    script_contents: str | None = None

    @model_validator(mode="after")
    def _exactly_one_source(self) -> "ScriptDefinition":
        if (self.source_file_path is None) == (self.script_contents is None):
            raise ValueError(
                f"script {self.target_file_path!r} needs exactly one of source_file_path or script_contents"
            )
        return self


class ToolScriptDefinition(Frozen):
    scripts: list[ScriptDefinition] = Field(default_factory=list)


class ToolDefinitionHeader(Frozen):
    name: str
    description: str
    usage_explanation_long: str = ""
    usage_explanation_short: str = ""
    rules: list[str] = Field(default_factory=list)


class ToolDefinitionLogicBash(Frozen):
    permission_bash: BashToolPermission
    positive_examples: list[str] = Field(default_factory=list)
    negative_examples: list[str] = Field(default_factory=list)
    mode_specific_rules: list[str] = Field(default_factory=list)


class ToolDefinitionLogicJson(Frozen):
    permission_json: JsonToolPermission
    input_schema: dict | None = None
    output_schema: dict | None = None
    positive_examples: list[str] = Field(default_factory=list)
    negative_examples: list[str] = Field(default_factory=list)
    mode_specific_rules: list[str] = Field(default_factory=list)
    tool_scripts: list[ToolScriptDefinition] = Field(default_factory=list)


class ToolDefinition(Frozen):
    """A tool an agent can use. `handler_script` (or a script in `json_tool.tool_scripts`) holds its
    `ScriptTool` handler, which tool tests run when no mock applies."""

    header: ToolDefinitionHeader
    bash_tool: ToolDefinitionLogicBash | None = None
    json_tool: ToolDefinitionLogicJson | None = None
    mock: MockResponse | None = None
    handler_script: str | None = None
    tool_tests: list[ToolTest] = Field(default_factory=list)

    @property
    def name(self) -> str:
        return self.header.name

    def permission_rules(self) -> list[tuple[str, PermissionValue]]:
        """(bash pattern, value) pairs this tool grants, bash and JSON logic alike."""
        rules: list[tuple[str, PermissionValue]] = []
        for permission in (
            self.bash_tool.permission_bash if self.bash_tool else None,
            self.json_tool.permission_json if self.json_tool else None,
        ):
            if permission is not None:
                rules.extend((pattern, permission.value) for pattern in permission.allowed_commands)
        return rules

    def scripts(self) -> list[ScriptDefinition]:
        if self.json_tool is None:
            return []
        return [script for group in self.json_tool.tool_scripts for script in group.scripts]
