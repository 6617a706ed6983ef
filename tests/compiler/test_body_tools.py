"""The tools-only read of a compiled body (what the OpenCode and Claude read-backs ask) gives what the full read
of its facts gives, whatever the body holds."""

from hypothesis import given, settings
from hypothesis import strategies as st

from open_agent_compiler.compiler.prompt import (
    MCP, PERMISSIONS, SKILL_PREFIX, SKILLS, SUBAGENTS, TOOL_PREFIX, TOOLS, read_body_facts, read_body_tools,
)

_NAME = st.text(alphabet="ab-_. *#:", max_size=6)
_LINE = st.one_of(
    st.sampled_from([TOOLS, SKILLS, SUBAGENTS, MCP, PERMISSIONS, "", "## Usage", "## Tools ", " ## Tools",
                     "### Tool:", "Allowed commands:", "- read: deny (read files)", "  - `ls *`: allow"]),
    _NAME.map(lambda name: TOOL_PREFIX + name), _NAME.map(lambda name: SKILL_PREFIX + name),
    _NAME.map(lambda name: "##" + name), st.text(max_size=12),
)


@settings(max_examples=400, deadline=None)
@given(st.lists(_LINE, max_size=30))
def test_the_tools_read_alone_are_the_tools_of_every_fact(lines: list[str]) -> None:
    body = "\n".join(lines)
    assert read_body_tools(body) == read_body_facts(body).tools


def test_a_body_we_compiled() -> None:
    body = "\n".join(["Do things.", "", PERMISSIONS, "- read: deny (read files)", "", TOOLS, "",
                      TOOL_PREFIX + "a1-tool0", "text", TOOL_PREFIX + "a1-tool1", SKILLS, TOOL_PREFIX + "not-a-tool",
                      TOOLS, TOOL_PREFIX + "again"])
    assert read_body_tools(body) == ("a1-tool0", "a1-tool1", "again") == read_body_facts(body).tools
    assert read_body_tools("no permissions part\n" + TOOLS + "\n" + TOOL_PREFIX + "x") == ()
