"""The compiled prompt body and how to read its facts back.

Layout: the system prompt and usage text exactly as written (then, when defined, the workflow), then our
structured part, which starts at the last line that is exactly `## Permissions` and continues with only the
sections that have content: `## Tools`, `## Skills`, `## Subagents`, `## MCP servers`. The facts are the same
in every dialect; the wording names the harness's own mechanisms (`HarnessTerms`, one per dialect). Inside the
structured part every piece of user text is quoted (`> `), a list item (continuation lines indented) or an
indented code block, so only lines we write start at column 0 with something other than `- `. That makes the
facts recoverable (tool names, allowed commands, skills, subagents, MCP servers, permissions) even when a
user's text imitates our headings.
"""

import json
import re
import shlex
from collections.abc import Mapping, Sequence

from pydantic import BaseModel, ConfigDict

from open_agent_compiler.compiler.grants import Action, AgentGrants, strictest
from open_agent_compiler.compiler.identifiers import check_mcp_server, check_one_line
from open_agent_compiler.compiler.terms import NEUTRAL, HarnessTerms
# lf is imported by callers from here too
from open_agent_compiler.compiler.text import code_block, item, items, lf, paragraphs, quote  # noqa: F401
from open_agent_compiler.compiler.workflow import render_workflow
from open_agent_compiler.model.core.agent import McpServer, ToolFormat
from open_agent_compiler.model.core.skill import SkillDefinition
from open_agent_compiler.model.core.tool import ToolDefinition
from open_agent_compiler.model.registry import ResolvedAgent
from open_agent_compiler.model.tool_cli import FLAG_FORM

TOOLS, SKILLS, SUBAGENTS, MCP, PERMISSIONS = "## Tools", "## Skills", "## Subagents", "## MCP servers", "## Permissions"
TOOL_PREFIX, SKILL_PREFIX = "### Tool: ", "### Skill: "
ALLOWED_COMMANDS = "Allowed commands:"

_COMMAND_ITEM = re.compile(r"- `(.*)` \((allow|ask|deny)\)")
_NAME_ITEM = re.compile(r"- `([^`]+)`(?::.*)?")
_PERMISSION_ITEM = re.compile(r"- ([a-z_]+): (allow|ask|deny)(?: \(.*\))?")


# tools ---------------------------------------------------------------------------------------------------------
def render_tool(tool: ToolDefinition, terms: HarnessTerms | None = None, tool_format: ToolFormat = "both") -> list[str]:
    """One tool's section. `tool_format` (the agent's `chosen_format`): `bash` documents the command-line use,
    `json` the JSON contract, `both` both; the allowed commands (the grant) are listed whatever the format."""
    header = tool.header
    lines = [TOOL_PREFIX + check_one_line(tool.name, "tool name"), ""]
    prose = quote(paragraphs(header.description, header.usage_explanation_long or header.usage_explanation_short))
    lines += [*prose, ""] if prose else []
    logics = [logic for logic, shown in ((tool.bash_tool, tool_format in ("bash", "both")),
                                         (tool.json_tool, tool_format in ("json", "both"))) if logic and shown]
    logics = logics or [logic for logic in (tool.bash_tool, tool.json_tool) if logic]
    lines += items("Rules:", [*header.rules, *(rule for logic in logics for rule in logic.mode_specific_rules)])
    rules = _command_rules(tool)
    if rules:
        lines += [ALLOWED_COMMANDS, *(f"- `{pattern}` ({action})" for pattern, action in rules.items()), ""]
    if tool.json_tool is not None and tool.json_tool in logics:
        commands = tool.json_tool.permission_json.allowed_commands or [p for p, a in rules.items() if a != "deny"]
        shell = f" with {terms.shell}" if terms is not None else ""
        if commands and commands[0].endswith("*"):  # the form agent tests run and `ScriptTool.run` reads
            prefix = commands[0].removesuffix("*").strip()
            lines += [f"Run `{prefix} --<name> <value> ...`{shell}: {FLAG_FORM}. It prints one JSON object on "
                      "stdout.", ""]
        elif commands:
            lines += [f"Run `{commands[0]}`{shell}, exactly as written, with the input as one JSON object on "
                      "stdin; it prints one JSON object on stdout.", ""]
        else:  # see definition_problems: the compile warns
            lines += ["It has no command you may run: do not try to use it.", ""]
        schemas = (("Input schema:", tool.json_tool.input_schema), ("Output schema:", tool.json_tool.output_schema))
        for label, schema in schemas:
            if schema:
                lines += [label, "", *code_block(json.dumps(schema, indent=2, ensure_ascii=False))]
    lines += items("Examples:", [example for logic in logics for example in logic.positive_examples])
    lines += items("Do not:", [example for logic in logics for example in logic.negative_examples])
    return lines


def _command_rules(tool: ToolDefinition) -> dict[str, Action]:
    """Each pattern once (a tool's bash and JSON logic often share a command), with its strictest action."""
    rules: dict[str, Action] = {}
    for pattern, action in tool.permission_rules():
        known = rules.get(pattern)
        rules[pattern] = action if known is None or known == action else strictest((action, known)) or action
    return rules


# skills --------------------------------------------------------------------------------------------------------
def render_skill_summary(skill: SkillDefinition) -> list[str]:
    lines = [SKILL_PREFIX + check_one_line(skill.name, "skill name"), ""]
    prose = quote(paragraphs(skill.description, skill.usage_explanation_short))
    lines += [*prose, ""] if prose else []
    steps = [f"{step.header}" + (f": {step.rule}" if step.rule else "") for step in skill.workflow_steps]
    return lines + items("Workflow:", steps)


def render_skill_body(skill: SkillDefinition) -> str:
    """The body of a skill's SKILL.md: usage, rules, workflow steps with their tools, examples."""
    out = [paragraphs(skill.usage_explanation_long or skill.usage_explanation_short or skill.description), ""]
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


def _section_list(heading: str, examples: Sequence[object]) -> list[str]:
    """Examples are text or `SkillExample`s (whose str() reads as one sentence)."""
    texts = [str(example) for example in examples]
    lines = [line for text in texts if text.strip() for line in item(text)]
    return [heading, "", *lines, ""] if lines else []


# the agent body ------------------------------------------------------------------------------------------------
_PERMISSION_MEANING = {
    "read": "read files", "write": "create files", "edit": "change existing files",
    "task": "hand work to subagents", "skill": "load skills", "mcp": "use MCP servers",
    "webfetch": "fetch web pages", "websearch": "search the web",
}


def _mcp_line(server: McpServer, terms: HarnessTerms) -> str:
    where = f"command: {shlex.join(server.command)}" if server.command else f"url: {server.url or '?'}"
    text = f"`{check_mcp_server(server.name)}`: " + (server.description.strip() or server.name)
    naming = ""
    if terms.mcp_tools and server.allowed_tools:
        naming = "; you may use only " + ", ".join(terms.mcp_tool(server.name, tool) for tool in server.allowed_tools)
    elif terms.mcp_tools:
        naming = f"; its tools are called {terms.mcp_tool(server.name)}"
    return f"{text} ({where}){naming}"


def _permissions(grants: AgentGrants, terms: HarnessTerms, has_commands: bool) -> list[str]:
    summary = grants.permission_summary()
    lines = [PERMISSIONS, ""]
    lines += [f"- {key}: {action} ({_PERMISSION_MEANING.get(key, key)})" for key, action in summary.items()]
    lines.append("")
    if has_commands:
        enforced = (f"{terms.harness} refuses every other command." if terms.commands_enforced
                    else f"{terms.harness} does not stop other commands for you: never run one.")
        lines += [f"Run commands with {terms.shell}, and only the ones listed under \"{ALLOWED_COMMANDS[:-1]}\" "
                  f"below. {enforced}", ""]
    else:
        lines += ["You may not run shell commands.", ""]
    return lines


def render_structured(agent: ResolvedAgent, grants: AgentGrants, descriptions: Mapping[str, str],
                      terms: HarnessTerms) -> list[str]:
    """Our part of the body: permissions, then only the sections that have something in them."""
    has_commands = any(reachable.tool.permission_rules() for reachable in agent.tools)
    lines = _permissions(grants, terms, has_commands)
    if agent.tools:
        lines += [TOOLS, ""]
        for reachable in agent.tools:
            lines += render_tool(reachable.tool, terms, agent.definition.chosen_format(reachable.tool))
    if grants.skills:
        skills = {skill.name: skill for skill in agent.definition.skills}
        lines += [SKILLS, "", terms.load_skill("<name>"), ""]
        for name in grants.skills:
            lines += render_skill_summary(skills[name])
    if grants.subagents:
        lines += [SUBAGENTS, "", "Hand work to a subagent with " + terms.delegate_to("<name>") + ":", ""]
        texts = [f"`{name}`: {descriptions.get(name, '').strip() or name}" for name in grants.subagents]
        lines += [*(line for text in texts for line in item(text)), ""]
    if grants.mcp_servers:
        lines += [MCP, ""]
        if terms.mcp_tools is None:
            lines += [f"{terms.harness} cannot connect to MCP servers: these are not available to you here.", ""]
        texts = [_mcp_line(server, terms) for server in grants.mcp_servers]
        lines += [*(line for text in texts for line in item(text)), ""]
    return lines


def render_agent_body(agent: ResolvedAgent, grants: AgentGrants, descriptions: Mapping[str, str],
                      terms: HarnessTerms = NEUTRAL) -> str:
    """`descriptions` maps compiled agent names to their descriptions (for the subagent list); `terms` is the
    harness the body is written for."""
    definition = agent.definition
    head = [definition.system_prompt, definition.preamble]  # prompt_sections already make the system_prompt
    if definition.usage_explanation_long.strip():
        head += ["## Usage\n\n" + definition.usage_explanation_long.strip("\n")]
    head += ["\n".join(render_workflow(agent, terms))]
    if definition.inline_skills:
        head += [_inline_skill(skill) for skill in definition.skills]
    head += [definition.postamble]
    structured = render_structured(agent, grants, descriptions, terms)
    return paragraphs(*head, "\n".join(structured)) + "\n"


def _inline_skill(skill: SkillDefinition) -> str:
    """A skill's whole SKILL.md text in the instructions (`inline_skills`), its headings one level down."""
    body = render_skill_body(skill)
    lines = [("#" + line) if line.startswith("## ") else line for line in body.split("\n")]
    return f"## Skill {check_one_line(skill.name, 'skill name')}\n\n" + "\n".join(lines)


# reading facts back --------------------------------------------------------------------------------------------
class BodyFacts(BaseModel):
    """What a compiled body tells its agent. Missing structured part = nothing granted."""

    model_config = ConfigDict(frozen=True, defer_build=True)  # warm runs use none

    structured: bool = False  # False: the body is not one we compiled (no `## Permissions` part)
    tools: tuple[str, ...] = ()
    bash: dict[str, Action] = {}
    skills: tuple[str, ...] = ()
    subagents: tuple[str, ...] = ()
    mcp_servers: tuple[str, ...] = ()
    permissions: dict[str, Action] = {}


_HEADINGS = frozenset((TOOLS, SKILLS, SUBAGENTS, MCP, PERMISSIONS))


def read_body_tools(body: str) -> tuple[str, ...]:
    """`read_body_facts(body).tools`, reading only what decides it: the `### Tool:` lines of the `## Tools`
    section after the last `## Permissions` line (a read-back of OpenCode and Claude asks only for the tools:
    ~10 µs an agent against ~160 for every fact). Both begin with "##", as every section heading does."""
    lines = body.split("\n")
    last = len(lines) - 1
    while last >= 0 and lines[last] != PERMISSIONS:
        last -= 1
    if last < 0:
        return ()
    tools: list[str] = []
    in_tools = False
    for line in lines[last + 1 :]:
        if not line.startswith("##"):
            continue
        if line in _HEADINGS:
            in_tools = line == TOOLS
        elif in_tools and line.startswith(TOOL_PREFIX):
            tools.append(line[len(TOOL_PREFIX) :])
    return tuple(tools)


def read_body_facts(body: str) -> BodyFacts:
    lines = body.split("\n")
    starts = [i for i, line in enumerate(lines) if line == PERMISSIONS]
    if not starts:
        return BodyFacts()
    tools: list[str] = []
    skills: list[str] = []
    subagents: list[str] = []
    servers: list[str] = []
    bash: dict[str, Action] = {}
    permissions: dict[str, Action] = {}
    section, label = PERMISSIONS, ""
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

