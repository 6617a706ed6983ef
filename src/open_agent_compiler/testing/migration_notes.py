"""What `oac test` says where a run means something different from open-agent-compiler 1.16.5 (deliberate
differences, see docs/compatibility.md): one line per mock whose `sequence` has a plain-dict item with a key of
`MockResponse` (`kind`, `fixed_output`, ...), returned as data here where 1.16.5 turns it into a nested mock; and one
line when real handlers get the resources of `$OAC_RESOURCES_JSON`, which 1.16.5's tool tests never pass."""

import os

from collections.abc import Iterable, Iterator

from open_agent_compiler.model.core.mock import MockResponse
from open_agent_compiler.model.resource_handle import RESOURCES_ENV
from open_agent_compiler.model.registry import ResolvedConfig
from open_agent_compiler.testing.discovery import TestCase
from open_agent_compiler.testing.mocks import resolve_mock

# The fields 1.16.5 reads from a dict item (any other key it ignores; with none of these it refuses the item).
MOCK_FIELDS = ("kind", "fixed_output", "callable_spec", "sequence")


def mock_like_items(response: MockResponse, where: str = "") -> Iterator[tuple[str, list[str]]]:
    """(position, its mock keys) of every plain-dict `sequence` item 1.16.5 would read as a MockResponse, nested
    sequences included (position "2" or "2.1")."""
    if response.kind != "sequence":
        return
    for number, item in enumerate(response.sequence, 1):
        position = f"{where}{number}"
        if isinstance(item, MockResponse):
            yield from mock_like_items(item, f"{position}.")
        elif isinstance(item, dict) and (keys := [key for key in MOCK_FIELDS if key in item]):
            yield position, keys


def sequence_note(tool_name: str, source: str, response: MockResponse) -> str | None:
    found = list(mock_like_items(response))
    if not found:
        return None
    items = "; ".join(f"item {position} ({', '.join(keys)})" for position, keys in found)
    return (f"note: tool {tool_name!r} ({source}): sequence {items} is a plain dict, returned as data; "
            "open-agent-compiler 1.16.5 reads it as a nested mock — write MockResponse(...) for that")


def _reached(cases: Iterable[TestCase], resolved: ResolvedConfig) -> Iterator[tuple[str, str | None]]:
    """(tool name, mock profile) of every mock the cases can reach."""
    for case in cases:
        if case.kind == "tool" and case.tool is not None:
            yield case.tool.name, case.mock_profile
        elif case.kind == "agent" and case.slot is not None:
            yield from ((reachable.tool.name, case.mock_profile) for reachable in resolved.agent(case.slot).tools)


def sequence_notes(cases: Iterable[TestCase], resolved: ResolvedConfig) -> list[str]:
    """One line per (tool, mock) of the selected tests whose sequence holds a mock-like plain dict."""
    tools = {reachable.tool.name: reachable.tool for reachable in resolved.tools()}
    notes: dict[str, None] = {}
    for tool_name, profile_name in dict.fromkeys(_reached(cases, resolved)):
        tool = tools.get(tool_name)
        profile = resolved.mock_profiles.get(profile_name) if profile_name else None
        response, source = resolve_mock(tool_name, tool.mock if tool is not None else None, profile)
        if response is not None and response.kind == "sequence" and (note := sequence_note(tool_name, source, response)):
            notes[note] = None
    return list(notes)


RESOURCES_NOTE = (f"note: real handlers get the resources of ${RESOURCES_ENV} (as the script run as a command does); "
                  "open-agent-compiler 1.16.5's tool tests call execute() without them")


def resources_note(cases: Iterable[TestCase], resolved: ResolvedConfig) -> list[str]:
    """The line, when `$OAC_RESOURCES_JSON` is set and a selected tool test runs its real handler."""
    if not os.environ.get(RESOURCES_ENV):
        return []
    profiles = resolved.mock_profiles
    for case in cases:
        if case.kind == "tool" and case.tool is not None:
            profile = profiles.get(case.mock_profile) if case.mock_profile else None
            if resolve_mock(case.tool.name, case.tool.mock, profile)[0] is None:
                return [RESOURCES_NOTE]
    return []


def migration_notes(cases: list[TestCase], resolved: ResolvedConfig) -> list[str]:
    return sequence_notes(cases, resolved) + resources_note(cases, resolved)
