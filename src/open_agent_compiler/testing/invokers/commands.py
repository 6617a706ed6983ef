"""How a scripted tool call becomes a shell command a harness runs, and how the mock shim maps it back.

A tool call `call("echo-tool", text="hi")` becomes the tool's command pattern with its trailing `*` replaced by
the input's flag words (`model.tool_cli`: `--text hi`, shell-quoted) — the form the compiled prompt teaches and
`ScriptTool.run` reads, so the command an agent test ran also runs against the real handler. The pattern is the
tool's first `allow` pattern, else its first `ask`, else `deny` one: the compiled agent's own permission then
decides, in the harness, whether the command runs.
"""

import fnmatch
import shlex
from collections.abc import Mapping
from typing import Any

from open_agent_compiler.model.core.tool import PermissionValue, ToolDefinition
from open_agent_compiler.model.tool_cli import flag_words, parse_flag_words
from open_agent_compiler.testing.invokers.protocol import InvokerError

_PREFERENCE: tuple[PermissionValue, ...] = ("allow", "ask", "deny")


def command_pattern(tool: ToolDefinition) -> tuple[str, PermissionValue] | None:
    """(pattern, its action) a call of `tool` is expressed with; None when the tool has no command pattern."""
    rules = tool.permission_rules()
    for wanted in _PREFERENCE:
        for pattern, value in rules:
            if value == wanted:
                return pattern, value
    return None


def command_prefix(tool: ToolDefinition) -> str:
    """The tool's command without its trailing argument wildcard; '' if it has no command pattern."""
    found = command_pattern(tool)
    return found[0].removesuffix("*").strip() if found else ""


def command_for(tool: ToolDefinition, args: Mapping[str, Any]) -> str:
    found = command_pattern(tool)
    if found is None:
        raise InvokerError(f"tool {tool.name!r} has no command pattern a harness could run")
    pattern = found[0]
    prefix = pattern.removesuffix("*").strip()
    words = flag_words(args)
    if words and not pattern.endswith("*"):
        raise InvokerError(f"tool {tool.name!r}: its command pattern `{pattern}` takes no arguments (no trailing *), "
                           f"so a harness cannot pass it {', '.join(args)}")
    return " ".join([prefix, *map(shlex.quote, words)])


def normalized(command: str) -> str:
    try:
        return shlex.join(shlex.split(command))
    except ValueError:
        return command.strip()


def tool_of(command: str, tools: Mapping[str, ToolDefinition]) -> str | None:
    """The tool whose command pattern matches `command` (bash-permission glob: `*` is anything)."""
    text = normalized(command)
    for name, tool in tools.items():
        for pattern, _ in tool.permission_rules():
            if (fnmatch.fnmatchcase(text, pattern) or fnmatch.fnmatchcase(command.strip(), pattern)):
                return name
    return None


def parse_flags(words: list[str]) -> dict[str, Any]:
    """A command's flag words as arguments (`model.tool_cli`); words that are not flags go under `_`."""
    try:
        return parse_flag_words(words)
    except ValueError:
        return {"_": list(words)}
