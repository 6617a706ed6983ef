"""`oac coverage`: which grants and denials of each agent a test checks or exercises, from the definitions and
the results log alone (nothing is compiled to disk, nothing runs).

A grant is *checked* by a capability test of its slot that reads it back (a `must_*` entry, a `permission_*`
evaluator, or a `json_path`/`equals` evaluator on `permissions.K`, `tools`, `skills`, `subagents`,
`mcp_servers`); it is *exercised* by a tool test of a tool the agent reaches, or an agent test of the slot that
expects a call to it (a bash pattern: through the tools that grant it). A test whose latest record is
`not_runnable` never judged anything and covers nothing; a test never run yet still counts (it runs next time).
"""

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from json.encoder import encode_basestring_ascii
from typing import Any, Literal

from open_agent_compiler.compiler.bash_match import bash_matcher, last_match
from open_agent_compiler.compiler.grants import agent_grants
from open_agent_compiler.model.core.test_model import AgentTest, CapabilityTest
from open_agent_compiler.model.registry import ResolvedAgent, ResolvedConfig
from open_agent_compiler.testing.discovery import TestCase
from open_agent_compiler.testing.permissions import PermissionCheck

GrantKind = Literal["tool", "bash", "permission", "mcp", "skill", "subagent"]
NOT_COVERING = frozenset({"not_runnable"})  # a latest status that judged nothing


# Frozen dataclasses, not pydantic models: a 1,000-agent registry builds ~15,000 of them from values that are
# ours (validated definitions), at ~1 µs each instead of ~20 µs for pydantic's model_construct.
@dataclass(frozen=True, slots=True)
class TestRef:
    __test__ = False  # not a pytest class

    test_id: str
    status: str  # latest recorded status, "never run" without a record


@dataclass(frozen=True, slots=True)
class Grant:
    """One thing an agent may or may not do, and the tests that prove it."""

    kind: GrantKind
    name: str
    action: str  # allow / ask / deny
    checked_by: tuple[TestRef, ...]
    exercised_by: tuple[TestRef, ...]
    covered: bool  # a test that judged something (not `not_runnable`) checks or exercises it

    @classmethod
    def of(cls, kind: GrantKind, name: str, action: str, checked_by: tuple[TestRef, ...],
           exercised_by: tuple[TestRef, ...]) -> "Grant":
        covered = any(ref.status not in NOT_COVERING for ref in checked_by + exercised_by)
        return cls(kind, name, action, checked_by, exercised_by, covered)


@dataclass(frozen=True, slots=True)
class AgentCoverage:
    agent: str  # compiled name
    slot: str
    grants: tuple[Grant, ...]


@dataclass(frozen=True)
class Coverage:
    config: str
    dialect: str
    agents: tuple[AgentCoverage, ...]

    @property
    def total(self) -> int:
        return sum(len(agent.grants) for agent in self.agents)

    @property
    def covered(self) -> int:
        return sum(grant.covered for agent in self.agents for grant in agent.grants)

    @property
    def percent(self) -> float:
        return 100.0 if not self.total else 100.0 * self.covered / self.total

    def as_json(self) -> dict[str, Any]:
        return {"config": self.config, "dialect": self.dialect, "covered": self.covered, "total": self.total,
                "percent": round(self.percent, 1),
                "agents": [{"agent": a.agent, "slot": a.slot, "grants": [
                    {"kind": g.kind, "name": g.name, "action": g.action, "covered": g.covered,
                     "checked_by": [{"test_id": r.test_id, "status": r.status} for r in g.checked_by],
                     "exercised_by": [{"test_id": r.test_id, "status": r.status} for r in g.exercised_by]}
                    for g in a.grants]}
                    for a in self.agents]}

    def as_json_text(self) -> str:
        """`json.dumps(self.as_json())`, written directly: each test's entry is encoded once, not once per grant it
        checks or exercises, and no dict is built per grant (1,000 agents: ~15,000 grants, 2.4 MB)."""
        text = encode_basestring_ascii  # what json.dumps writes a str as (ensure_ascii, the C encoder)
        refs: dict[str, str] = {}

        def listed(found: tuple[TestRef, ...]) -> str:
            encoded = []
            for ref in found:
                entry = refs.get(ref.test_id)
                if entry is None:
                    entry = refs[ref.test_id] = f'{{"test_id": {text(ref.test_id)}, "status": {text(ref.status)}}}'
                encoded.append(entry)
            return ", ".join(encoded)

        agents = ", ".join(
            f'{{"agent": {text(a.agent)}, "slot": {text(a.slot)}, "grants": [' + ", ".join(
                f'{{"kind": {text(g.kind)}, "name": {text(g.name)}, "action": {text(g.action)}, '
                f'"covered": {"true" if g.covered else "false"}, "checked_by": [{listed(g.checked_by)}], '
                f'"exercised_by": [{listed(g.exercised_by)}]}}' for g in a.grants) + "]}"
            for a in self.agents)
        return (f'{{"config": {text(self.config)}, "dialect": {text(self.dialect)}, "covered": {self.covered}, '
                f'"total": {self.total}, "percent": {round(self.percent, 1)!r}, "agents": [{agents}]}}')


def coverage_lines(report: Coverage) -> list[str]:
    """The text table: an agent per block, a grant per line, its tests or UNCOVERED, then the summary."""
    lines = [f"oac coverage: config {report.config} (dialect {report.dialect})"]
    for agent in report.agents:
        lines.append(f"agent {agent.agent} (slot {agent.slot})")
        for grant in agent.grants:
            tests = [f"checks {r.test_id} ({r.status})" for r in grant.checked_by]
            tests += [f"exercises {r.test_id} ({r.status})" for r in grant.exercised_by]
            where = "; ".join(tests) if grant.covered else "UNCOVERED" + (f" ({'; '.join(tests)})" if tests else "")
            lines.append(f"  {grant.kind:<10} {grant.action:<5} {grant.name}: {where}")
    lines.append(f"oac coverage: {report.covered}/{report.total} grants covered ({report.percent:.1f}%)")
    return lines


def _paths(test: CapabilityTest) -> Iterable[tuple[str, Any]]:
    """(dotted path, expected) of the test's json_path/equals evaluators over the capability dict."""
    for evaluator in test.evaluators:
        path = getattr(evaluator, "path", None) or getattr(evaluator, "field", None)
        if isinstance(path, str) and hasattr(evaluator, "expected"):
            yield path, evaluator.expected


def _names(expected: Any) -> set[str]:
    if isinstance(expected, str):
        return {expected}
    if isinstance(expected, (list, tuple)):
        return {item for item in expected if isinstance(item, str)}
    return set()


class _Checks:
    """What one capability test reads back, as (kind, name) pairs of the slot's grants."""

    def __init__(self, test: CapabilityTest, rules: Mapping[str, str], dialect: str, postfix: str) -> None:
        matcher = bash_matcher(dialect)
        found: set[tuple[str, str]] = set()
        commands = list(test.must_have_bash_patterns) + list(test.must_not_have_bash_patterns)
        keys = list(test.must_have_permissions) + list(test.must_not_have_permissions)
        for evaluator in test.evaluators:
            if isinstance(evaluator, PermissionCheck):
                if evaluator.bash_pattern:
                    commands.append(evaluator.bash_pattern)
                elif evaluator.permission_key:
                    keys.append(evaluator.permission_key)
        for command in commands:
            match = last_match(rules, command, matcher)
            if match is not None:
                found.add(("bash", match[0]))
        found.update(("permission", key) for key in keys)
        found.update(("tool", name) for name in test.must_have_tools + test.must_not_have_tools)
        found.update(("skill", name) for name in test.must_have_skills + test.must_not_have_skills)
        for name in test.must_have_subagents:
            found.update((("subagent", name), ("subagent", name + postfix)))
        fields = {"tools": "tool", "skills": "skill", "subagents": "subagent", "mcp_servers": "mcp"}
        for path, expected in _paths(test):
            head, _, rest = path.partition(".")
            if head == "permissions" and rest:
                found.add(("permission", rest))
            elif head == "bash" and rest:
                found.add(("bash", rest))
            elif head in fields:
                found.update((fields[head], name) for name in _names(expected))
        self.found = found


def _agent_calls(test: AgentTest) -> set[str]:
    """The tool names an agent test expects to be called (per turn and overall, and `tool_called` evaluators)."""
    names = set(test.expected_tool_calls)
    evaluators = list(test.evaluators)
    for turn in test.turns:
        names.update(turn.expected_tool_calls)
        evaluators += turn.evaluators
    names.update(e.tool_name for e in evaluators if e.kind == "tool_called")  # type: ignore[attr-defined]
    return names


def _unique(refs: list[TestRef]) -> list[TestRef]:
    return list({ref.test_id: ref for ref in refs}.values())


def _agent_grants(agent: ResolvedAgent) -> list[tuple[GrantKind, str, str]]:
    grants = agent_grants(agent)
    found: list[tuple[GrantKind, str, str]] = [("tool", name, "allow") for name in
                                               dict.fromkeys(r.tool.name for r in agent.tools)]
    found += [("bash", pattern, action) for pattern, action in grants.bash]
    found += [("permission", key, action) for key, action in grants.permission_summary().items()]
    found += [("mcp", server.name, "allow") for server in grants.mcp_servers]
    found += [("skill", name, "allow") for name in grants.skills]
    found += [("subagent", name, "allow") for name in grants.subagents]
    return found


def coverage(resolved: ResolvedConfig, cases: list[TestCase], statuses: Mapping[str, str],
             dialect: str = "opencode") -> Coverage:
    """The coverage of every agent of `resolved` by `cases` (discovered from it), with each test's latest
    recorded status from `statuses` (test id -> status)."""
    # each test's reference once (a pydantic model's attribute is a slow read); the grants' lists hold references
    refs: dict[int, TestRef] = {}  # id(case) → its reference
    covering: set[int] = set()  # id(reference) of the tests whose latest status judged something
    tool_tests: dict[str, list[TestRef]] = {}
    by_slot: dict[str, list[TestCase]] = {}
    for case in cases:
        test_id = case.test_id
        status = statuses.get(test_id, "never run")
        ref = refs[id(case)] = TestRef(test_id, status)  # (built without validation: the values are ours)
        if status not in NOT_COVERING:
            covering.add(id(ref))
        if case.kind == "tool":
            tool_tests.setdefault(case.target_name, []).append(ref)
        elif case.slot is not None:
            by_slot.setdefault(case.slot, []).append(case)

    def grant(kind: GrantKind, name: str, action: str) -> Grant:
        checks = checked.get((kind, name), ())
        uses = exercised.get((kind, name), ())
        covered = not covering.isdisjoint(map(id, checks)) or not covering.isdisjoint(map(id, uses))
        return Grant(kind, name, action, tuple(checks), tuple(uses), covered)

    agents = []
    for agent in resolved.agents:
        grants = _agent_grants(agent)
        rules = {name: action for kind, name, action in grants if kind == "bash"}
        checked: dict[tuple[str, str], list[TestRef]] = {}
        exercised: dict[tuple[str, str], list[TestRef]] = {}
        for case in by_slot.get(agent.slot, ()):
            test = case.test
            if isinstance(test, CapabilityTest):
                for pair in _Checks(test, rules, dialect, agent.postfix).found:
                    checked.setdefault(pair, []).append(refs[id(case)])
            elif isinstance(test, AgentTest):
                for name in _agent_calls(test):
                    exercised.setdefault(("tool", name), []).append(refs[id(case)])
        for reachable in agent.tools:
            tool = reachable.tool
            tool_name = tool.name
            users = _unique(tool_tests.get(tool_name, []) + exercised.get(("tool", tool_name), []))
            exercised[("tool", tool_name)] = users
            for pattern, _ in tool.permission_rules():
                known = exercised.setdefault(("bash", pattern), [])
                known[:] = _unique(known + users)
        agents.append(AgentCoverage(agent.compiled_name, agent.slot,
                                    tuple([grant(kind, name, action) for kind, name, action in grants])))
    return Coverage(resolved.config.name, dialect, tuple(agents))
