"""An agent's mandatory workflow (`AgentDefinition.workflow`) as instructions, in the words of its harness.

Rendered into the free-text head of the body (before `## Permissions`), so nothing here is read back as a
granted fact. Steps appear in order with their gate ("only when …"), instructions, questions to answer
(`evaluates`), tools to use, subagents to hand off to (named the way the harness calls them), routes to other
steps and todo marks. `todo_mode`: strict = a todo list first, a mark after each step and a final check; lazy
= the list first and the final check; none = no list. The list is kept in the agent's own messages (or with a
plan tool a harness gives every agent, `HarnessTerms.todo`): no harness grants its todo tool to our agents by
default (OpenCode's `todowrite` is denied, Claude Code's `TodoWrite` is not in `tools`, Codex 0.171 and Pi have
none), and a script helper would need its own command grant for nothing a checklist cannot do.
"""

from collections.abc import Sequence

from open_agent_compiler.compiler.terms import HarnessTerms
from open_agent_compiler.compiler.text import item, lf
from open_agent_compiler.model.core.workflow_model import WorkflowStepDefinition
from open_agent_compiler.model.registry import ResolvedAgent

WORKFLOW = "## Workflow"


def subagent_names(agent: ResolvedAgent) -> dict[str, str]:
    """A step names a subagent by name or agent_id; map both to its compiled name."""
    names: dict[str, str] = {}
    for header, compiled in zip(agent.definition.subagents, agent.subagents):
        names.setdefault(header.name, compiled)
        names.setdefault(header.agent_id, compiled)
        names.setdefault(compiled, compiled)
    return names


def workspace_dir(agent: ResolvedAgent) -> str | None:
    pattern = agent.definition.workspace
    return pattern.replace("{name}", agent.compiled_name) if pattern else None


def todo_items(steps: Sequence[WorkflowStepDefinition]) -> list[tuple[str, str]]:
    """(todo name, description) once per name, in step order."""
    seen: dict[str, str] = {}
    for step in steps:
        seen.setdefault(step.effective_todo_name(), step.todo_description.strip())
        for done in step.marks_done:  # a step may complete an item no step is named after
            seen.setdefault(done, "")
    return list(seen.items())


def _todo_keeping(terms: HarnessTerms) -> str:
    if terms.todo:
        return f"Keep it with {terms.todo}."
    return "Keep it in your messages as a checklist (`- [ ]` / `- [x]`) and show it again whenever an item changes."


def _step_lines(step: WorkflowStepDefinition, agent: ResolvedAgent, terms: HarnessTerms, strict: bool) -> list[str]:
    lines = [f"### Step {step.id}: {' '.join(step.name.split())}", ""]
    if step.gate is not None:
        checks = [f"`{check.variable}` is `{check.value}`" for check in step.gate.checks]
        joined = (" and " if step.gate.logic == "all" else " or ").join(checks)
        lines += [f"Do this step only when {joined}; otherwise skip it.", ""]
    if step.instructions.strip():
        lines += [lf(step.instructions).strip("\n"), ""]
    for criterion in step.evaluates:
        values = f" Answer one of: {', '.join(f'`{v}`' for v in criterion.possible_values)}." \
            if criterion.possible_values else ""
        lines += item(f"Decide `{criterion.name}`: {' '.join(criterion.question.split())}{values}")
    tools = {reachable.tool.name: reachable.tool for reachable in agent.tools}
    for use in step.tool_uses:
        tool = tools.get(use.tool_name)
        note = f" ({' '.join(use.note.split())})" if use.note else ""
        if tool is None:
            lines += item(f"Tool `{use.tool_name}`{note}: it is not one of your tools, so you cannot use it here.")
        else:
            commands = list(dict.fromkeys(pattern for pattern, action in tool.permission_rules() if action != "deny"))
            how = f" — with {terms.shell}: " + ", ".join(f"`{c}`" for c in commands) if commands else ""
            lines += item(f"Use the tool `{tool.name}`{note}{how}.")
    names = subagent_names(agent)
    for name in step.subagents:
        compiled = names.get(name)
        if compiled is None:
            lines += item(f"Subagent `{name}`: not one of your subagents, so you cannot hand work to it.")
        else:
            lines += item(f"Hand off to `{compiled}` with {terms.delegate_to(compiled)}.")
    for route in step.routes:
        lines += item(f"If `{route.criteria_name}` is `{route.value}`, continue at step {route.goto_step}.")
    if strict:
        for done in step.marks_done or ((step.effective_todo_name(),) if step.todo_name else ()):
            lines += item(f"Mark the todo item `{done}` done.")
    return [*lines, ""]


def workflow_problems(agent: ResolvedAgent) -> list[str]:
    """What a step names that the agent does not have: rendered as "you cannot", and reported by the compile."""
    if not agent.definition.workflow:  # (most agents: no step, nothing to look up; asked for every agent per run)
        return []
    tools = {reachable.tool.name for reachable in agent.tools}
    names = subagent_names(agent)
    ids = {step.id for step in agent.definition.workflow}
    problems = []
    for step in agent.definition.workflow:
        where = f"workflow step {step.id} ({step.name!r})"
        problems += [f"{where} uses tool {use.tool_name!r}, which is not one of its tools"
                     for use in step.tool_uses if use.tool_name not in tools]
        problems += [f"{where} hands off to {name!r}, which is not one of its subagents"
                     for name in step.subagents if name not in names]
        problems += [f"{where} routes to step {route.goto_step}, which does not exist"
                     for route in step.routes if route.goto_step not in ids]
    return problems


def render_workflow(agent: ResolvedAgent, terms: HarnessTerms) -> list[str]:
    """The workflow section (empty when the agent has none)."""
    definition = agent.definition
    steps = definition.workflow
    if not steps:
        return []
    mode = definition.todo_mode
    lines = [WORKFLOW, "", "Follow these steps, in order, for every request. A step may send you to another "
             "step; otherwise go on to the next one.", ""]
    workspace = workspace_dir(agent)
    if mode != "none":
        lines += ["### Before step 1: the todo list", "",
                  f"Write a todo list with one item per step. {_todo_keeping(terms)}", ""]
        for name, description in todo_items(steps):
            lines += item(f"`{name}`" + (f": {' '.join(description.split())}" if description else ""))
        lines.append("")
    if workspace:
        lines += ["### Before step 1: your workspace", "",
                  f"Keep every file you create under `{workspace}/` (create the directory first); "
                  "do not write anywhere else.", ""]
    for step in steps:
        lines += _step_lines(step, agent, terms, strict=mode == "strict")
    if mode != "none":
        lines += ["### Finally", "", "Check the todo list: every item must be done before you answer. If one is "
                  "not, go back to its step.", ""]
    return lines
