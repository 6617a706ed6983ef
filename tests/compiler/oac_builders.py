"""Builders shared by the compiler tests: tools, agents and a three-agent team registry."""

from typing import Any

from open_agent_compiler.model.core.agent import (
    AgentDefinition,
    AgentHeader,
    AgentToolPermissions,
    McpServer,
    ModelParameters,
)
from open_agent_compiler.model.core.skill import SkillDefinition, WorkflowStep
from open_agent_compiler.model.core.template import CompilationConfig, TemplateSlot, TemplateTree
from open_agent_compiler.model.core.tool import (
    BashToolPermission,
    JsonToolPermission,
    ScriptDefinition,
    ToolDefinition,
    ToolDefinitionHeader,
    ToolDefinitionLogicBash,
    ToolDefinitionLogicJson,
    ToolScriptDefinition,
)
from open_agent_compiler.model.registry import AgentRegistry

DIALECT_NAMES = ("opencode", "claude", "pi", "codex")


def bash_tool(name: str, *patterns: str, value: str = "allow", rules: tuple[str, ...] = ()) -> ToolDefinition:
    return ToolDefinition(
        header=ToolDefinitionHeader(name=name, description=f"The {name} tool.", rules=list(rules)),
        bash_tool=ToolDefinitionLogicBash(
            permission_bash=BashToolPermission(value=value, allowed_commands=list(patterns)),  # type: ignore[arg-type]
            positive_examples=[p.replace("*", "x") for p in patterns],
        ),
    )


def json_tool(name: str, target: str, contents: str = "print('hi')\n", pattern: str | None = None) -> ToolDefinition:
    return ToolDefinition(
        header=ToolDefinitionHeader(name=name, description=f"The {name} JSON tool."),
        json_tool=ToolDefinitionLogicJson(
            permission_json=JsonToolPermission(allowed_commands=[pattern or f"python3 {target}"]),
            input_schema={"type": "object", "properties": {"text": {"type": "string"}}},
            tool_scripts=[ToolScriptDefinition(
                scripts=[ScriptDefinition(target_file_path=target, script_contents=contents)])],
        ),
    )


def agent(agent_id: str, **fields: Any) -> AgentDefinition:
    header = AgentHeader(agent_id=agent_id, name=agent_id, description=fields.pop("description", f"{agent_id} agent"))
    fields.setdefault("system_prompt", f"You are {agent_id}.")
    return AgentDefinition(header=header, **fields)


def team_registry(postfix: str = "") -> AgentRegistry:
    """primary (read, delegates to researcher and writer, a skill, an MCP server), researcher (read + bash),
    writer (write + edit + a JSON tool with a script)."""
    search = bash_tool("search", "rg *", "git log *")
    stats = json_tool("stats", "scripts/stats.py", "#!/usr/bin/env python3\nprint('{}')\n")
    skill = SkillDefinition(
        name="summarize", description="Summarize findings.", rules=["Be brief."],
        workflow_steps=[WorkflowStep(header="Collect", rule="Search first.", tools_used=[search])],
    )
    reg = AgentRegistry()
    reg.register_agent("researcher", agent("researcher", extra_tools=[search],
                                           tool_permissions=AgentToolPermissions(read=True)),
                       ModelParameters(model_name="prov/model-r", reasoning_effort="low"))
    reg.register_agent("writer", agent("writer", extra_tools=[stats],
                                       tool_permissions=AgentToolPermissions(write=True, edit=True)))
    reg.register_agent(
        "lead",
        agent("lead", skills=[skill],
              subagents=[AgentHeader(agent_id="researcher", name="researcher"),
                         AgentHeader(agent_id="writer", name="writer")],
              tool_permissions=AgentToolPermissions(read=True, mcp=True),
              mcp_servers=[McpServer(name="docs", command=["npx", "docs-server"], description="Docs.")]),
        ModelParameters(model_name="prov/model-l", temperature=0.2, reasoning_effort="high"),
    )
    reg.register_template(TemplateTree(name="team", slots=[
        TemplateSlot(name="primary", default_agent_id="lead"),
        TemplateSlot(name="researcher", default_agent_id="researcher"),
        TemplateSlot(name="writer", default_agent_id="writer"),
    ]))
    reg.create_compilation_config(CompilationConfig(name="prod", template_name="team", postfix=postfix))
    return reg
