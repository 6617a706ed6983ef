"""Deny by default, as each harness really evaluates it (issue 10, section 4 and the permission items of 7).

OpenCode applies the LAST matching rule; Claude Code applies deny > ask > allow whatever the order. What we
emit must give the intended decision (the strictest of overlapping grants) in both, and the capability
read-back must compute what the harness computes, not look patterns up by their exact text.
"""

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from open_agent_compiler.compiler import bash_match
from open_agent_compiler.compiler.bash_match import claude_match, js_key_order, opencode_match
from open_agent_compiler.compiler.dialects import DIALECTS
from open_agent_compiler.compiler.frontmatter import parse_markdown
from open_agent_compiler.errors import OacError
from open_agent_compiler.model.core.agent import AgentDefinition, AgentHeader, AgentToolPermissions, McpServer
from open_agent_compiler.model.core.capabilities import Capabilities
from open_agent_compiler.model.core.template import CompilationConfig, TemplateSlot, TemplateTree
from open_agent_compiler.model.core.tool import BashToolPermission, ToolDefinition, ToolDefinitionHeader
from open_agent_compiler.model.core.tool import ToolDefinitionLogicBash
from open_agent_compiler.model.registry import AgentRegistry, ResolvedConfig
from open_agent_compiler.testing.permissions import bash_action, permission_action

DIALECT_NAMES = tuple(DIALECTS)


def tool(name: str, *patterns: str, value: str = "allow") -> ToolDefinition:
    return ToolDefinition(
        header=ToolDefinitionHeader(name=name, description=f"The {name} tool."),
        bash_tool=ToolDefinitionLogicBash(
            permission_bash=BashToolPermission(value=value, allowed_commands=list(patterns))),  # type: ignore[arg-type]
    )


def resolve(*agents: tuple[str, AgentDefinition]) -> ResolvedConfig:
    reg = AgentRegistry()
    for agent_id, definition in agents:
        reg.register_agent(agent_id, definition)
    slots = [TemplateSlot(name="primary" if i == 0 else agent_id, default_agent_id=agent_id)
             for i, (agent_id, _) in enumerate(agents)]
    reg.register_template(TemplateTree(name="t", slots=slots))
    reg.create_compilation_config(CompilationConfig(name="c", template_name="t"))
    return reg.resolve_config("c")


def one_agent(**fields) -> ResolvedConfig:  # type: ignore[no-untyped-def]
    header = AgentHeader(agent_id="a", name="a", description="An agent.")
    return resolve(("a", AgentDefinition(header=header, system_prompt="Work.", **fields)))


def caps(dialect: str, resolved: ResolvedConfig, slot: str = "primary") -> Capabilities:
    spec = DIALECTS[dialect]
    return spec.capabilities(slot, spec.compile(resolved).file_map())


def opencode_permission(resolved: ResolvedConfig, slot: str = "primary") -> dict:
    files = DIALECTS["opencode"].compile(resolved).file_map()
    config, _ = parse_markdown(files[f".opencode/agents/{slot}.md"], slot)
    return config["permission"]


def opencode_decides(permission: dict, tool_name: str, value: str) -> str:
    """An independent evaluation of an OpenCode permission map: flatten it in key order after OpenCode's own
    `*: allow` default, and take the last rule whose tool and pattern match (`*` = any text, a trailing ` *`
    optional: all the syntax these cases use)."""
    import re

    def matches(text: str, pattern: str) -> bool:
        optional_tail = pattern.endswith(" *")
        regex = ".*".join(re.escape(part) for part in (pattern[:-2] if optional_tail else pattern).split("*"))
        return re.fullmatch(regex + ("( .*)?" if optional_tail else ""), text, re.DOTALL) is not None

    rules = [("*", "*", "allow")]
    for key, value_ in permission.items():
        for pattern, action in (value_.items() if isinstance(value_, dict) else [("*", value_)]):
            rules.append((key, pattern, action))
    decided = "ask"
    for key, pattern, action in rules:
        if matches(tool_name, key) and matches(value, pattern):
            decided = action
    return decided


# --- matching, per harness ---------------------------------------------------------------------------------
@pytest.mark.parametrize("command, pattern, expected", [
    ("git push origin main", "git *", True),
    ("git", "git *", True),  # a trailing " *" is optional in OpenCode
    ("gitk", "git *", False),
    ("ls notes/a/b.md", "ls notes/*", True),  # `*` crosses `/`
    ("ls notes", "ls notes/*", False),
    ("echo a\nrm -rf /", "echo *", True),  # `*` crosses newlines too
    ("cat a.txt", "cat ?.txt", True),
    ("cat ab.txt", "cat ?.txt", False),
    ("python3 x.py", "python3 x.py", True),
    ("python3 xxpy", "python3 x.py", False),  # `.` is literal
    ("notes-fs_read_file", "notes-fs_*", True),
    ("other_read_file", "notes-fs_*", False),
])
def test_opencode_wildcard_matching(command: str, pattern: str, expected: bool) -> None:
    assert opencode_match(command, pattern) is expected


@pytest.mark.parametrize("command, pattern, expected", [
    ("git push origin main", "git *", True),
    ("git", "git *", True),
    ("gitk", "git *", False),
    ("git  push", "git push", False),  # exact rules compare the text
    ("git   push x", "git push *", True),  # runs of blanks count as one space in wildcard rules
    ("npm run test", "npm run test:*", True),  # legacy prefix rule
    ("npm run test --watch", "npm run test:*", True),
    ("npm run tests", "npm run test:*", False),
    ("cat ?.txt", "cat ?.txt", True),  # `?` is literal for Claude
    ("cat a.txt", "cat ?.txt", False),
    ("echo \\*", "echo \\*", True),  # no unescaped star: an exact rule, compared as written
    ("echo *", "echo \\*", False),
    ("echo * now", "echo \\* *", True),  # in a wildcard rule an escaped star is a literal star
    ("echo x now", "echo \\* *", False),
    ("echo \\foo", "echo \\\\*", True),  # an escaped backslash, then an unescaped star: a wildcard rule
    ("echo \\", "echo \\\\*", True),
    ("echo foo", "echo \\\\*", False),
    ("lsof", "ls*", True),
    ("lsof", "ls *", False),
])
def test_claude_bash_rule_matching(command: str, pattern: str, expected: bool) -> None:
    assert claude_match(command, pattern) is expected


def test_js_key_order_moves_array_indices_first() -> None:
    assert js_key_order(["*", "b", "42", "7", "007", "-1"]) == ["7", "42", "*", "b", "007", "-1"]


def test_opencode_read_back_uses_javascript_key_order() -> None:
    """OpenCode reads `{"*": deny, "42": allow}` as 42 first, so the catch-all after it denies 42 too."""
    text = ('---\ndescription: d\npermission:\n  "*": deny\n  task:\n    "*": deny\n    "42": allow\n'
            '    helper: allow\n---\nb\n')
    found = DIALECTS["opencode"].capabilities("x", {".opencode/agents/x.md": text.encode()})
    assert found.subagents == ("helper",)


# --- section 4: overlapping grants ---------------------------------------------------------------------------
OVERLAP = {"extra_tools": [tool("no-push", "git push *", value="deny"), tool("git", "git *")]}


@pytest.mark.parametrize("dialect", DIALECT_NAMES)
def test_a_later_broad_allow_does_not_undo_a_deny(dialect: str) -> None:
    """`git *` allowed by a tool listed after one denying `git push *`: git push stays denied everywhere."""
    found = caps(dialect, one_agent(**OVERLAP))
    assert bash_action(found, "git push origin main")[0] == "deny"
    assert bash_action(found, "git push *")[0] == "deny"
    assert bash_action(found, "git status")[0] == "allow"
    assert bash_action(found, "git *")[0] == "allow"


def test_opencode_emits_the_catch_all_first_and_the_strictest_last() -> None:
    permission = opencode_permission(one_agent(**OVERLAP))
    assert next(iter(permission.items())) == ("*", "deny")
    assert list(permission["bash"].items()) == [("*", "deny"), ("git *", "allow"), ("git push *", "deny")]
    assert opencode_decides(permission, "bash", "git push origin main") == "deny"
    assert opencode_decides(permission, "bash", "git log") == "allow"


def test_opencode_read_back_follows_the_file_order_not_the_intent() -> None:
    """Hand-reordered rules (deny before the broad allow) read back as OpenCode computes them: allowed."""
    spec = DIALECTS["opencode"]
    files = spec.compile(one_agent(**OVERLAP)).file_map()
    path = ".opencode/agents/primary.md"
    text = files[path].decode()
    deny_line, allow_line = '    "git push *": deny\n', '    "git *": allow\n'
    assert allow_line + deny_line in text
    files[path] = text.replace(allow_line + deny_line, deny_line + allow_line).encode()
    assert bash_action(spec.capabilities("primary", files), "git push origin main")[0] == "allow"


def test_claude_read_back_is_deny_over_ask_over_allow_whatever_the_order() -> None:
    spec = DIALECTS["claude"]
    files = spec.compile(one_agent(extra_tools=[tool("git", "git *")])).file_map()
    settings = json.loads(files[".claude/settings.json"])
    settings["permissions"]["deny"] = ["Bash(git push *)"]
    settings["permissions"]["ask"] = ["Bash(git commit *)"]
    # an allow listed before the broad one, for a pattern that is also denied: still denied
    allowed = settings["permissions"]["allow"]
    settings["permissions"]["allow"] = ["Bash(git push *)", "Bash(git push origin main)", *allowed]
    files[".claude/settings.json"] = json.dumps(settings).encode()
    found = spec.capabilities("primary", files)
    assert bash_action(found, "git push origin main")[0] == "deny"
    assert bash_action(found, "git commit -m x")[0] == "ask"
    assert bash_action(found, "git log")[0] == "allow"
    assert bash_action(found, "rm -rf /")[0] == "deny"  # dontAsk: what no rule allows is denied


@pytest.mark.parametrize("dialect", DIALECT_NAMES)
@pytest.mark.parametrize("values, expected", [(("allow", "deny"), "deny"), (("deny", "allow"), "deny"),
                                              (("allow", "ask"), "ask"), (("ask", "allow"), "ask")])
def test_two_tools_granting_one_pattern_the_strictest_wins(dialect: str, values: tuple[str, str],
                                                           expected: str) -> None:
    resolved = one_agent(extra_tools=[tool("one", "make *", value=values[0]), tool("two", "make *", value=values[1])])
    found = caps(dialect, resolved)
    assert bash_action(found, "make *")[0] == expected
    assert bash_action(found, "make install")[0] == expected


# --- section 4: every agent denies what it was not granted, MCP tools of other agents included ---------------
def mcp_team(coordinator_mcp: bool = True) -> ResolvedConfig:
    server = McpServer(name="notes-fs", command=["notes-server"])
    coordinator = AgentDefinition(
        header=AgentHeader(agent_id="coordinator", name="coordinator", description="Coordinates."),
        tool_permissions=AgentToolPermissions(read=True, mcp=coordinator_mcp), mcp_servers=[server],
        subagents=[AgentHeader(agent_id="researcher", name="researcher")])
    researcher = AgentDefinition(
        header=AgentHeader(agent_id="researcher", name="researcher", description="Researches."),
        tool_permissions=AgentToolPermissions(read=True), extra_tools=[tool("ls", "ls notes/*")])
    return resolve(("coordinator", coordinator), ("researcher", researcher))


def test_opencode_researcher_cannot_use_the_coordinators_mcp_tools() -> None:
    resolved = mcp_team()
    researcher = opencode_permission(resolved, "researcher")
    assert opencode_decides(researcher, "notes-fs_read_file", "*") == "deny"
    assert opencode_decides(researcher, "codesearch", "*") == "deny"  # a tool nobody named
    assert opencode_decides(opencode_permission(resolved), "notes-fs_read_file", "*") == "allow"
    found = caps("opencode", resolved, "researcher")
    assert found.mcp_servers == () and permission_action(found, "mcp")[0] == "deny"
    assert permission_action(found, "codesearch")[0] == "deny"


def test_opencode_read_back_sees_an_agent_without_a_catch_all_as_open() -> None:
    files = {".opencode/agents/x.md": b"---\ndescription: d\npermission:\n  bash: deny\n---\nbody\n"}
    found = DIALECTS["opencode"].capabilities("x", files)
    assert found.mcp_servers == ("*",) and permission_action(found, "mcp")[0] == "allow"
    assert permission_action(found, "codesearch")[0] == "allow"
    assert bash_action(found, "ls")[0] == "deny"


@pytest.mark.parametrize("dialect", DIALECT_NAMES)
def test_listed_mcp_servers_are_granted_with_the_mcp_permission_off(dialect: str) -> None:
    # As in the public package, `mcp_servers` is the per-server grant; `tool_permissions.mcp` does not undo it.
    found = caps(dialect, mcp_team(coordinator_mcp=False))
    assert found.mcp_servers == ("notes-fs",) and permission_action(found, "mcp")[0] == "allow"
    if dialect == "opencode":
        resolved = mcp_team(coordinator_mcp=False)
        assert opencode_decides(opencode_permission(resolved), "notes-fs_read_file", "*") == "allow"
        assert opencode_decides(opencode_permission(resolved, "researcher"), "notes-fs_read_file", "*") == "deny"


# --- section 7: bash patterns that are not one line -----------------------------------------------------------
@pytest.mark.parametrize("pattern", ["ls\nrm -rf /", "ls\rx", "ls\x00", "ls\x1b[2J", "ls\x7f", "", "   ", "42"])
@pytest.mark.parametrize("dialect", DIALECT_NAMES)
def test_bad_bash_patterns_are_one_clear_error(dialect: str, pattern: str) -> None:
    with pytest.raises(OacError, match=r"tool 'bad': bash pattern .* (one non-empty line|only digits)") as info:
        DIALECTS[dialect].compile(one_agent(extra_tools=[tool("bad", pattern)]))
    assert "\n" not in str(info.value)


# The read-back's matcher takes shortcuts for literal and prefix patterns; each must agree with the full
# wildcard regex (OpenCode's rule) on every command.
_WILDCARD_TEXT = st.text(alphabet="ab */?.\\\n", max_size=8)


@given(pattern=_WILDCARD_TEXT, command=_WILDCARD_TEXT)
@settings(max_examples=3000, deadline=None)
def test_opencode_match_shortcuts_agree_with_the_wildcard_regex(pattern: str, command: str) -> None:
    regex = bash_match._opencode_regex(pattern)
    assert opencode_match(command, pattern) is (regex.fullmatch(command.replace("\\", "/")) is not None)


@pytest.mark.parametrize("pattern", ["git *", "git*", "*", " *", "git", "a.b", "a\\b", "a\\*"])
@pytest.mark.parametrize("command", ["git", "git ", "git x", "gitx", "gi", "", " ", "a.b", "axb", "a/b", "a\\b",
                                     "a/*", "a/x"])
def test_opencode_match_shortcut_shapes(pattern: str, command: str) -> None:
    regex = bash_match._opencode_regex(pattern)
    assert opencode_match(command, pattern) is (regex.fullmatch(command.replace("\\", "/")) is not None)
