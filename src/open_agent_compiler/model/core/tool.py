"""Tool definitions: what a tool is, how an agent may invoke it, and how it is mocked and tested."""

import os
from pathlib import PurePath
from typing import Annotated, Any, Literal

from pydantic import Field, field_validator, model_validator

from open_agent_compiler.model.core.base import Frozen, PathText, empty_list
from open_agent_compiler.model.core.mock import MockResponse
from open_agent_compiler.model.core.test_model import ToolTest
from open_agent_compiler.model.hashing import FAITHFUL

PermissionValue = Literal["allow", "ask", "deny"]


class _Positional(Frozen):
    """Also constructible positionally, in field order (registries written for the public package do that)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        if args:  # (the field names only when asked for: `model_fields` goes through a deprecation shim)
            names = list(type(self).__pydantic_fields__)
            if len(args) > len(names):
                raise TypeError(f"{type(self).__name__} takes at most {len(names)} positional arguments")
            for name, value in zip(names, args):
                if name in kwargs:
                    raise TypeError(f"{type(self).__name__} got two values for {name!r}")
                kwargs[name] = value
        super().__init__(**kwargs)


class BashToolPermission(_Positional):
    """Each allowed command is a bash permission pattern (glob, `*` = anything) granted with `value`."""

    tool_name: str = "bash"
    scope: Literal["bash"] = "bash"
    value: PermissionValue = "allow"
    allowed_commands: list[str] = Field(default_factory=empty_list)


class JsonToolPermission(_Positional):
    """A JSON tool is a script fed JSON on stdin; its command patterns are granted like bash patterns."""

    tool_name: str = "bash"
    scope: Literal["custom_tool"] = "custom_tool"
    value: PermissionValue = "allow"
    allowed_commands: list[str] = Field(default_factory=empty_list)


ScriptType = Literal["python", "javascript", "typescript"]
_TYPE_OF_SUFFIX: dict[str, ScriptType] = {
    ".py": "python", ".js": "javascript", ".mjs": "javascript", ".ts": "typescript", ".tsx": "typescript",
}


class ScriptDefinition(Frozen):
    """One file the compiler writes under the target: `script_contents` if given, else a copy of
    `source_file_path`. Paths may be `str` or `pathlib.Path`; the type defaults to the target's suffix."""

    target_file_path: PathText
    source_file_path: PathText | None = None
    source_file_type: ScriptType | None = None  # None and no known suffix: python
    script_contents: str | None = None

    @model_validator(mode="after")
    def _source_and_type(self) -> "ScriptDefinition":
        if self.source_file_path is None and self.script_contents is None:
            raise ValueError(
                f"script {self.target_file_path!r} needs script_contents or source_file_path"
            )
        source = self.source_file_path
        if self.script_contents is None and source is not None and os.path.isabs(source) and not os.path.exists(source):
            # An absolute path does not depend on the source root: a missing one is wrong wherever it compiles.
            raise ValueError(f"script {self.target_file_path!r}: source file {source!r} does not exist")
        suffix = PurePath(self.target_file_path).suffix.lower()
        implied = _TYPE_OF_SUFFIX.get(suffix)
        if self.source_file_type is None and implied is not None:
            object.__setattr__(self, "source_file_type", implied)  # frozen: set once, during validation
        elif implied is not None and self.source_file_type != implied:
            raise ValueError(
                f"script {self.target_file_path!r}: source_file_type {self.source_file_type!r} does not match "
                f"its {suffix!r} suffix ({implied!r})"
            )
        return self


class ToolScriptDefinition(Frozen):
    """`scripts` the compiler writes; `paths` lists script files the tool uses that exist already."""

    paths: list[PathText] | None = None
    scripts: list[ScriptDefinition] = Field(default_factory=empty_list)

    @field_validator("scripts", mode="before")
    @classmethod
    def _none_is_empty(cls, value: Any) -> Any:
        return [] if value is None else value


class ToolDefinitionHeader(Frozen):
    name: str
    description: str
    usage_explanation_long: str = ""
    usage_explanation_short: str = ""
    rules: list[str] = Field(default_factory=empty_list)


class ToolDefinitionLogicBash(Frozen):
    permission_bash: BashToolPermission
    positive_examples: list[str] = Field(default_factory=empty_list)
    negative_examples: list[str] = Field(default_factory=empty_list)
    mode_specific_rules: list[str] = Field(default_factory=empty_list)


class ToolDefinitionLogicJson(Frozen):
    permission_json: JsonToolPermission
    input_schema: Annotated[dict | None, FAITHFUL] = None
    output_schema: Annotated[dict | None, FAITHFUL] = None
    positive_examples: list[str] = Field(default_factory=empty_list)
    negative_examples: list[str] = Field(default_factory=empty_list)
    mode_specific_rules: list[str] = Field(default_factory=empty_list)
    tool_scripts: list[ToolScriptDefinition] = Field(default_factory=empty_list)


class ToolDefinition(Frozen):
    """A tool an agent can use. `handler_script` (or a script in `json_tool.tool_scripts`) holds its
    `ScriptTool` handler, which tool tests run when no mock applies."""

    header: ToolDefinitionHeader
    bash_tool: ToolDefinitionLogicBash | None = None
    json_tool: ToolDefinitionLogicJson | None = None
    mock: MockResponse | None = None
    handler_script: str | None = None
    requires_resources: list[str] = Field(default_factory=empty_list)  # resource names an AccessProfile must bind
    inputs: tuple[str, ...] = ()  # globs (from the project root) of files its handler reads unseen (a subprocess)
    tool_tests: list[ToolTest] = Field(default_factory=empty_list)

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
