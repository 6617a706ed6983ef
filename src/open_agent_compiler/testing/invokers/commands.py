"""How a scripted tool call becomes a shell command a harness runs, and how the mock shim maps it back.

A tool call `call("echo-tool", text="hi")` becomes the tool's first allowed command pattern with its trailing
`*` replaced by `--text hi` (each argument as `--name value`, shell-quoted; non-string values as JSON). The
compiled agent's own bash permission then allows exactly that command.
"""

import fnmatch
import json
import shlex
from collections.abc import Mapping
from typing import Any

from open_agent_compiler.model.core.tool import ToolDefinition
from open_agent_compiler.testing.invokers.protocol import InvokerError


def command_prefix(tool: ToolDefinition) -> str:
    """The tool's command without its trailing argument wildcard; '' if it has no command pattern."""
    for pattern, value in tool.permission_rules():
        if value == "allow":
            return pattern.removesuffix("*").strip()
    return ""


def command_for(tool: ToolDefinition, args: Mapping[str, Any]) -> str:
    prefix = command_prefix(tool)
    if not prefix:
        raise InvokerError(f"tool {tool.name!r} has no allowed command pattern a harness could run")
    words = []
    for name, value in args.items():
        words += [f"--{name}", value if isinstance(value, str) else json.dumps(value)]
    return " ".join([prefix, *map(shlex.quote, words)])


def normalized(command: str) -> str:
    try:
        return shlex.join(shlex.split(command))
    except ValueError:
        return command.strip()


def tool_of(command: str, tools: Mapping[str, ToolDefinition]) -> str | None:
    """The tool whose allowed command pattern matches `command` (bash-permission glob: `*` is anything)."""
    text = normalized(command)
    for name, tool in tools.items():
        for pattern, value in tool.permission_rules():
            if value == "allow" and (fnmatch.fnmatchcase(text, pattern) or fnmatch.fnmatchcase(command.strip(), pattern)):
                return name
    return None


def parse_flags(words: list[str]) -> dict[str, Any]:
    """`--name value` pairs as arguments (values that are JSON non-strings are decoded)."""
    args: dict[str, Any] = {}
    index = 0
    while index < len(words):
        word = words[index]
        if word.startswith("--") and index + 1 < len(words):
            value: Any = words[index + 1]
            try:
                decoded = json.loads(value)
                value = value if isinstance(decoded, str) else decoded
            except ValueError:
                pass
            args[word[2:]] = value
            index += 2
        else:
            args.setdefault("_", []).append(word)
            index += 1
    return args
