"""Promoted improvements: definitions tuned elsewhere (e.g. by the public package's `oac improve` / `oac promote`)
applied on top of the definitions a registry builds.

A promoted snapshot is a JSON file under `<project>/.oac/promoted/`:

    {"schema_version": "1", "notes": "...",
     "version": {"component_id": "my-agent", "kind": "agent", "content_hash": "...",
                 "definition": {"system_prompt": "...", ...}, "metrics": {"pass_rate": 0.9}}}

named `<component_id>.json`, or `<component_id>__<slot>.json` for a model class or target slot ("/" in ids becomes
"__"); a client's own promotions live one directory deeper, in `<client_id>/`. Lookup order: the client's
directory, then the shared one; within each, target slot, model-class slot, then the plain file. An agent's own
promotion competes with one promoted for its orchestration branch (`branch:<id>`): the higher recorded score
(`score_floor`, else `pass_rate`) wins, a tie goes to the branch.

Only prompt-level fields are taken from a promotion (see the `*_FIELDS` tuples); structure — tools, permissions,
subagents, tests — always comes from the registry. This module reads files, so the registry imports it only
inside `AgentRegistry.register_with_improvements`.
"""

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from open_agent_compiler.errors import OacError
from open_agent_compiler.improvement.criteria import Criterion, CriterionKind, OptimisationCriterion, metric_key
from open_agent_compiler.improvement.out_of_scope import LOOP_NAMES, OutOfScopeError, loop_name
from open_agent_compiler.model.core.agent import AgentDefinition, render_prompt_sections
from open_agent_compiler.model.core.skill import SkillDefinition, SkillExample, WorkflowStep
from open_agent_compiler.model.core.tool import ToolDefinition
from open_agent_compiler.model.validation_errors import describe_validation_error

AGENT_FIELDS = ("system_prompt", "preamble", "postamble", "todo_mode", "model_class", "prompt_sections")
TOOL_HEADER_FIELDS = ("description", "usage_explanation_long", "usage_explanation_short", "rules")
SKILL_FIELDS = ("description", "usage_explanation_long", "usage_explanation_short", "rules")

__all__ = [
    "AGENT_FIELDS", "Criterion", "CriterionKind", "OptimisationCriterion", "OutOfScopeError", "metric_key", "SKILL_FIELDS", "TOOL_HEADER_FIELDS", "apply_promoted_to_agent", "apply_promoted_to_skill",
    "apply_promoted_to_tool", "apply_promoted_to_tree", "find_promoted_snapshot", "load_promoted_definition",
]


def __getattr__(name: str) -> Any:
    """A name of 1.16.5's improvement loop imports (and refuses to run, `improvement.out_of_scope`)."""
    if name not in LOOP_NAMES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = globals()[name] = loop_name(name)
    return value


def _file_name(component_id: str, slot: str | None) -> str:
    safe = component_id.replace("/", "__")
    return f"{safe}__{slot}.json" if slot else f"{safe}.json"


def _read(path: Path) -> dict[str, Any]:
    """The snapshot in `path`. A file that is not a snapshot is an error naming it, never silently skipped:
    compiling the baseline while the user believes the promotion applies would misreport what runs."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise OacError(f"promoted snapshot {path}: cannot be read as JSON ({' '.join(str(exc).split())})") from None
    version = data.get("version") if isinstance(data, dict) else None
    if not isinstance(version, dict) or not isinstance(version.get("definition"), dict):
        raise OacError(f"promoted snapshot {path}: no version.definition object")
    return data


Found = tuple[Path, dict[str, Any]]  # a snapshot file and its parsed content


def _in_directory(directory: Path, component_id: str, slots: Iterable[str | None]) -> Found | None:
    for slot in [*(s for s in slots if s), None]:
        path = directory / _file_name(component_id, slot)
        if path.is_file():
            return path, _read(path)
    return None


def _find(
    component_id: str, project_root: Path | None, model_class: str | None, client_id: str | None, target: str | None
) -> Found | None:
    base = (project_root or Path.cwd()) / ".oac" / "promoted"
    directories = ([base / client_id.replace("/", "__")] if client_id else []) + [base]
    for directory in directories:
        found = _in_directory(directory, component_id, (target, model_class))
        if found is not None:
            return found
    return None


def find_promoted_snapshot(
    component_id: str,
    project_root: Path | None = None,
    *,
    model_class: str | None = None,
    client_id: str | None = None,
    target: str | None = None,
) -> dict[str, Any] | None:
    """The promoted snapshot (parsed JSON) for `component_id`, or None when none was promoted."""
    found = _find(component_id, project_root, model_class, client_id, target)
    return found[1] if found is not None else None


def load_promoted_definition(
    component_id: str,
    project_root: Path | None = None,
    *,
    model_class: str | None = None,
    client_id: str | None = None,
    target: str | None = None,
) -> dict[str, Any] | None:
    snapshot = find_promoted_snapshot(
        component_id, project_root, model_class=model_class, client_id=client_id, target=target
    )
    return dict(snapshot["version"]["definition"]) if snapshot is not None else None


def _score(found: Found) -> float:
    metrics = found[1]["version"].get("metrics") or {}
    for key in ("score_floor", "pass_rate"):
        if isinstance(metrics.get(key), (int, float)):
            return float(metrics[key])
    return float("-inf")


def _promoted(found: Found, fields: Iterable[str]) -> dict[str, Any]:
    """The promoted values of `fields` that the snapshot carries."""
    definition = found[1]["version"]["definition"]
    return {name: definition[name] for name in fields if name in definition}


def _updated(model: Any, updates: dict[str, Any], source: Path | None = None) -> Any:
    """`model` with `updates` validated like any other input (a promotion is data from disk); a value that does
    not validate is one error line naming the snapshot file."""
    if not updates:
        return model
    values = {name: getattr(model, name) for name in type(model).model_fields}
    try:
        return type(model)(**{**values, **updates})
    except ValidationError as exc:
        if source is None:
            raise
        raise OacError(f"promoted snapshot {source}: {describe_validation_error(exc)}") from None


def _with_promoted(model: Any, found: Found | None, fields: Iterable[str]) -> Any:
    """`model` with the promoted `fields` of `found`; `model` itself when nothing was promoted or changed."""
    return model if found is None else _updated(model, _promoted(found, fields), found[0])


def apply_promoted_to_agent(
    agent_definition: AgentDefinition,
    component_id: str | None = None,
    project_root: Path | None = None,
    *,
    model_class: str | None = None,
    client_id: str | None = None,
    target: str | None = None,
    fields: tuple[str, ...] = AGENT_FIELDS,
    consider_branch: bool = True,
) -> AgentDefinition:
    """`agent_definition` with the promoted `fields` of `component_id` (default: its agent_id); unchanged
    when nothing was promoted. Promoted prompt sections also become the system prompt."""
    key = component_id or agent_definition.header.agent_id
    found = _find(key, project_root, model_class, client_id, target)
    if consider_branch:
        branch = _find(f"branch:{key}", project_root, model_class, client_id, target)
        if branch is not None and (found is None or _score(branch) >= _score(found)):
            found = branch
    if found is None:
        return agent_definition
    updates = _promoted(found, fields)
    sections = updates.get("prompt_sections")
    if isinstance(sections, list) and sections and all(isinstance(section, dict) for section in sections):
        updates["system_prompt"] = render_prompt_sections(sections)
    return _updated(agent_definition, updates, found[0])


def apply_promoted_to_tool(
    tool_definition: ToolDefinition,
    component_id: str | None = None,
    project_root: Path | None = None,
    *,
    model_class: str | None = None,
    client_id: str | None = None,
    target: str | None = None,
    header_fields: tuple[str, ...] = TOOL_HEADER_FIELDS,
) -> ToolDefinition:
    found = _find(component_id or tool_definition.name, project_root, model_class, client_id, target)
    header = _with_promoted(tool_definition.header, found, header_fields)
    return _updated(tool_definition, {"header": header}) if header is not tool_definition.header else tool_definition


def apply_promoted_to_skill(
    skill_definition: SkillDefinition,
    component_id: str | None = None,
    project_root: Path | None = None,
    *,
    model_class: str | None = None,
    client_id: str | None = None,
    target: str | None = None,
    fields: tuple[str, ...] = SKILL_FIELDS,
) -> SkillDefinition:
    found = _find(component_id or skill_definition.name, project_root, model_class, client_id, target)
    return _with_promoted(skill_definition, found, fields)


def apply_promoted_to_tree(
    agent_definition: AgentDefinition,
    project_root: Path | None = None,
    *,
    model_class: str | None = None,
    client_id: str | None = None,
    target: str | None = None,
    agent_component_id: str | None = None,
) -> AgentDefinition:
    """The agent, each skill (by name), each tool its skills' steps and examples use and each extra tool (by
    name), every one with its promotion applied. Subagents are improved when they are registered themselves."""
    lookup: dict[str, Any] = {"model_class": model_class, "client_id": client_id, "target": target}

    def tool(t: ToolDefinition) -> ToolDefinition:
        return apply_promoted_to_tool(t, None, project_root, **lookup)

    def step(s: WorkflowStep | SkillExample | str) -> Any:
        if isinstance(s, str):
            return s
        return _updated(s, {"tools_used": [tool(t) for t in s.tools_used]}) if s.tools_used else s

    agent = apply_promoted_to_agent(agent_definition, agent_component_id, project_root, **lookup)
    skills = []
    for skill in agent.skills:
        improved = apply_promoted_to_skill(skill, None, project_root, **lookup)
        skills.append(_updated(improved, {
            "workflow_steps": [step(s) for s in improved.workflow_steps],
            "positive_examples": [step(e) for e in improved.positive_examples],
            "negative_examples": [step(e) for e in improved.negative_examples],
        }))
    updates: dict[str, Any] = {}
    if skills != list(agent.skills):
        updates["skills"] = skills
    tools = [tool(t) for t in agent.extra_tools]
    if tools != list(agent.extra_tools):
        updates["extra_tools"] = tools
    return _updated(agent, updates)
