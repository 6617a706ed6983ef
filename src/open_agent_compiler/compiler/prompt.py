"""The compiled prompt body, the same for every dialect, and how to read its facts back.

Layout: the system prompt and usage text exactly as written, then our structured part, which starts at the
last line that is exactly `## Tools` and continues with `## Skills`, `## Subagents`, `## MCP servers` and
`## Permissions`. Inside the structured part every piece of user text is quoted (`> `), a list item
(continuation lines indented) or an indented code block, so only lines we write start at column 0 with
something other than `- `. That makes the facts recoverable (tool names, allowed commands, skills,
subagents, MCP servers, permissions) even when a user's text imitates our headings.
"""

import json
import re
import shlex
from collections.abc import Iterable, Mapping

from pydantic import BaseModel, ConfigDict

from open_agent_compiler.compiler.grants import Action, AgentGrants, strictest
from open_agent_compiler.compiler.identifiers import check_mcp_server, check_one_line
from open_agent_compiler.model.core.agent import McpServer
from open_agent_compiler.model.core.skill import SkillDefinition
from open_agent_compiler.model.core.tool import ToolDefinition
from open_agent_compiler.model.registry import ResolvedAgent

TOOLS, SKILLS, SUBAGENTS, MCP, PERMISSIONS = "## Tools", "## Skills", "## Subagents", "## MCP servers", "## Permissions"
TOOL_PREFIX, SKILL_PREFIX = "### Tool: ", "### Skill: "
ALLOWED_COMMANDS = "Allowed commands:"
NONE = "(none)"

_COMMAND_ITEM = re.compile(r"- `(.*)` \((allow|ask|deny)\)")
_NAME_ITEM = re.compile(r"- `([^`]+)`(?::.*)?")
_PERMISSION_ITEM = re.compile(r"- ([a-z_]+): (allow|ask|deny)")
_NEWLINES = re.compile(r"\r\n?")


# rendering helpers ---------------------------------------------------------------------------------------------
def lf(text: str) -> str:
    """User text with CRLF and lone CR as LF: one line ending in every dialect (TOML multi-line strings, used
    for codex, cannot keep CR), and no CR that a harness might break a line at."""
    return _NEWLINES.sub("\n", text)


def quote(text: str) -> list[str]:
    """User prose as a blockquote."""
    text = lf(text)
    return [f"> {line}" if line else ">" for line in text.strip("\n").split("\n")] if text.strip() else []


def item(text: str, bullet: str = "- ") -> list[str]:
    """One list item; continuation lines indented so they never start at column 0."""
    first, *rest = lf(text).strip("\n").split("\n")
    return [bullet + first, *("  " + line for line in rest)]


def items(label: str, texts: Iterable[str]) -> list[str]:
    lines = [line for text in texts if text.strip() for line in item(text)]
    return [label, *lines, ""] if lines else []


def code_block(text: str) -> list[str]:
    return ["    " + line if line else "" for line in text.split("\n")] + [""]


def _paragraphs(*parts: str) -> str:
    return "\n\n".join(lf(part).strip("\n") for part in parts if part.strip())


# tools ---------------------------------------------------------------------------------------------------------
def render_tool(tool: ToolDefinition) -> list[str]:
    header = tool.header
    lines = [TOOL_PREFIX + check_one_line(tool.name, "tool name"), ""]
    prose = quote(_paragraphs(header.description, header.usage_explanation_long or header.usage_explanation_short))
    lines += [*prose, ""] if prose else []
    logic = tool.bash_tool or tool.json_tool
    mode_rules = logic.mode_specific_rules if logic else []
    lines += items("Rules:", [*header.rules, *mode_rules])
    rules = tool.permission_rules()
    if rules:
        lines += [ALLOWED_COMMANDS, *(f"- `{pattern}` ({action})" for pattern, action in rules), ""]
    if tool.json_tool is not None:
        lines += ["Send the input as one JSON object on stdin; the output is one JSON object on stdout.", ""]
        schemas = (("Input schema:", tool.json_tool.input_schema), ("Output schema:", tool.json_tool.output_schema))
        for label, schema in schemas:
            if schema:
                lines += [label, "", *code_block(json.dumps(schema, indent=2, ensure_ascii=False))]
    if logic is not None:
        lines += items("Examples:", logic.positive_examples)
        lines += items("Do not:", logic.negative_examples)
    return lines


# skills --------------------------------------------------------------------------------------------------------
def render_skill_summary(skill: SkillDefinition) -> list[str]:
    lines = [SKILL_PREFIX + check_one_line(skill.name, "skill name"), ""]
    prose = quote(_paragraphs(skill.description, skill.usage_explanation_short))
    lines += [*prose, ""] if prose else []
    steps = [f"{step.header}" + (f": {step.rule}" if step.rule else "") for step in skill.workflow_steps]
    return lines + items("Workflow:", steps)


def render_skill_body(skill: SkillDefinition) -> str:
    """The body of a skill's SKILL.md: usage, rules, workflow steps with their tools, examples."""
    out = [_paragraphs(skill.usage_explanation_long or skill.usage_explanation_short or skill.description), ""]
    if skill.rules:
        out += ["## Rules", "", *(line for rule in skill.rules for line in item(rule)), ""]
    if skill.workflow_steps:
        out += ["## Workflow", ""]
        for number, step in enumerate(skill.workflow_steps, 1):
            text = step.header + (f": {step.rule}" if step.rule else "")
            out += item(text, bullet=f"{number}. ")
            if step.tools_used:
                out.append("   Tools: " + ", ".join(f"`{tool.name}`" for tool in step.tools_used))
        out.append("")
    out += _section_list("## Examples", skill.positive_examples) + _section_list("## Avoid", skill.negative_examples)
    return "\n".join(out).strip("\n") + "\n"


def _section_list(heading: str, texts: list[str]) -> list[str]:
    lines = [line for text in texts if text.strip() for line in item(text)]
    return [heading, "", *lines, ""] if lines else []


# the agent body ------------------------------------------------------------------------------------------------
def _mcp_line(server: McpServer) -> str:
    where = f"command: {shlex.join(server.command)}" if server.command else f"url: {server.url or '?'}"
    text = f"`{check_mcp_server(server.name)}`: " + (server.description.strip() or server.name)
    return f"{text} ({where})"


def render_agent_body(agent: ResolvedAgent, grants: AgentGrants, descriptions: Mapping[str, str]) -> str:
    """`descriptions` maps compiled agent names to their descriptions (for the subagent list)."""
    definition = agent.definition
    head = [definition.system_prompt.strip("\n")]
    if definition.usage_explanation_long.strip():
        head += ["## Usage\n\n" + definition.usage_explanation_long.strip("\n")]
    lines = [TOOLS, ""]
    for reachable in agent.tools:
        lines += render_tool(reachable.tool)
    if not agent.tools:
        lines += [NONE, ""]
    lines += [SKILLS, ""]
    for skill in definition.skills:
        lines += render_skill_summary(skill)
    if not definition.skills:
        lines += [NONE, ""]
    lines += [SUBAGENTS, ""]
    subagents = [f"`{name}`: {descriptions.get(name, '').strip() or name}" for name in grants.subagents]
    lines += [*(line for text in subagents for line in item(text)), ""] if subagents else [NONE, ""]
    lines += [MCP, ""]
    servers = [_mcp_line(server) for server in grants.mcp_servers]
    lines += [*(line for text in servers for line in item(text)), ""] if servers else [NONE, ""]
    lines += [PERMISSIONS, ""]
    lines += [f"- {key}: {action}" for key, action in grants.permission_summary().items()]
    lines += ["", "Run only the commands listed under \"Allowed commands\"; every other command is denied."]
    return _paragraphs(*head, "\n".join(lines)) + "\n"


# reading facts back --------------------------------------------------------------------------------------------
class BodyFacts(BaseModel):
    """What a compiled body tells its agent. Missing structured part = nothing granted."""

    model_config = ConfigDict(frozen=True)

    structured: bool = False  # False: the body is not one we compiled (no `## Tools` part)
    tools: tuple[str, ...] = ()
    bash: dict[str, Action] = {}
    skills: tuple[str, ...] = ()
    subagents: tuple[str, ...] = ()
    mcp_servers: tuple[str, ...] = ()
    permissions: dict[str, Action] = {}


def read_body_facts(body: str) -> BodyFacts:
    lines = body.split("\n")
    starts = [i for i, line in enumerate(lines) if line == TOOLS]
    if not starts:
        return BodyFacts()
    tools: list[str] = []
    skills: list[str] = []
    subagents: list[str] = []
    servers: list[str] = []
    bash: dict[str, Action] = {}
    permissions: dict[str, Action] = {}
    section, label = TOOLS, ""
    for line in lines[starts[-1] + 1 :]:
        if line in (TOOLS, SKILLS, SUBAGENTS, MCP, PERMISSIONS):
            section, label = line, ""
        elif section == TOOLS and line.startswith(TOOL_PREFIX):
            tools.append(line[len(TOOL_PREFIX) :])
            label = ""
        elif section == SKILLS and line.startswith(SKILL_PREFIX):
            skills.append(line[len(SKILL_PREFIX) :])
        elif line and not line.startswith(("- ", " ", ">")):
            label = line
        elif section == TOOLS and label == ALLOWED_COMMANDS and (match := _COMMAND_ITEM.fullmatch(line)):
            pattern, action = match.group(1), match.group(2)
            bash[pattern] = strictest([action, bash.get(pattern, action)]) or action  # type: ignore[list-item]
        elif section in (SUBAGENTS, MCP) and (match := _NAME_ITEM.fullmatch(line)):
            (subagents if section == SUBAGENTS else servers).append(match.group(1))
        elif section == PERMISSIONS and (match := _PERMISSION_ITEM.fullmatch(line)):
            permissions[match.group(1)] = match.group(2)  # type: ignore[assignment]
    return BodyFacts(
        structured=True,
        tools=tuple(tools), bash=bash, skills=tuple(skills), subagents=tuple(subagents),
        mcp_servers=tuple(servers), permissions=permissions,
    )

