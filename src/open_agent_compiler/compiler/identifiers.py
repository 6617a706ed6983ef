"""Checks for names that end up inside compiled files (headings, permission keys, skill folders)."""

import re

from open_agent_compiler.errors import OacError, UnsafeNameError
from open_agent_compiler.model.names import check_segment

# The Agent Skills standard (and OpenCode, which drops other names): lowercase words joined by single hyphens.
_SKILL_NAME = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")
SKILL_DESCRIPTION_MAX = 1024
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")  # one regex search, not a Python loop over every character


def check_one_line(value: str, what: str) -> str:
    """A name shown on one line of a compiled prompt: non-empty, no control characters, no edge spaces."""
    if not value or value != value.strip() or _CONTROL.search(value):
        raise UnsafeNameError(f"unsafe {what} {value!r}: must be one line without leading/trailing spaces")
    return value


def check_skill(name: str, description: str) -> str:
    check_segment(name, "skill name")
    if len(name) > 64 or not _SKILL_NAME.fullmatch(name):
        raise OacError(
            f"skill name {name!r} must be 1-64 lowercase letters/digits in words joined by single '-' "
            "(Agent Skills standard; harnesses drop other names)"
        )
    if not description.strip() or len(description) > SKILL_DESCRIPTION_MAX:
        raise OacError(f"skill {name!r}: description must be 1-{SKILL_DESCRIPTION_MAX} characters")
    return name


def check_mcp_server(name: str) -> str:
    check_segment(name, "MCP server name")
    if "." in name:
        raise UnsafeNameError(f"unsafe MCP server name {name!r}: use letters, digits, '-', '_'")
    return name
