"""The `must_*` fields of a capability test, each one check against the capabilities read back from the
compiled artifact (see `compiler.bash_match` for how commands are matched per harness).

"ask" is never "allowed": a `must_have_*` entry holds only when the harness allows without asking, and a
`must_not_have_*` entry holds when it asks or denies. Skills are checked against the skills the artifact
grants, tools against the tools it describes and the permission keys it allows (a built-in tool such as read,
write, edit or task is granted by its key, as 1.16.5 counts it), subagents against those it may call.
"""

from open_agent_compiler.model.core.capabilities import Capabilities
from open_agent_compiler.model.core.evaluator import EvaluatorResult
from open_agent_compiler.model.core.test_model import CapabilityTest
from open_agent_compiler.testing.permissions import bash_action, bash_overall, permission_action
from open_agent_compiler.testing.readback import Lookup, ReadBack

NOTHING_TO_CHECK = "nothing to check: no must_* entries or evaluators"


def _check(kind: str, passed: bool, evidence: str) -> EvaluatorResult:
    return EvaluatorResult(evaluator_kind="capability", name=kind, passed=passed, score=1.0 if passed else 0.0,
                           evidence=evidence)


def _tool_grant(caps: Capabilities, name: str) -> tuple[bool, str]:
    """Whether the artifact grants tool `name`: it describes the tool, or allows the permission key of that name
    (bash read from its rules, as everywhere). Said with the grant that decided."""
    if name in caps.tools:
        return True, f"tool {name!r} is granted"
    if name == "bash":
        action, how = bash_overall(caps)
        return action == "allow", how
    action = caps.permissions.get(name)
    if action is not None:
        return action == "allow", f"tool {name!r} is not described; permission {name!r} is {action!r}"
    return False, f"tool {name!r} is not granted (granted tools: {', '.join(caps.tools) or 'none'})"


def capability_checks(test: CapabilityTest, read: Capabilities | ReadBack, postfix: str) -> list[EvaluatorResult]:
    """One result per `must_*` entry of `test` (none when it has none: the caller reports NOTHING_TO_CHECK).
    Given a `ReadBack`, each entry's decision comes from (or goes to) the artifact's memo."""
    if isinstance(read, Capabilities):
        read = ReadBack(read)
    caps = read.capabilities
    checks = []
    actions: tuple[tuple[str, tuple[str, ...], Lookup, bool], ...] = (
        ("must_have_bash_patterns", test.must_have_bash_patterns, bash_action, True),
        ("must_not_have_bash_patterns", test.must_not_have_bash_patterns, bash_action, False),
        ("must_have_permissions", test.must_have_permissions, permission_action, True),
        ("must_not_have_permissions", test.must_not_have_permissions, permission_action, False),
    )
    for field, items, lookup, wanted in actions:
        for item in items:
            action, how = read.decide(lookup, item)
            checks.append(_check(field, (action == "allow") == wanted,
                                 f"{how}; expected {'allow' if wanted else 'not allowed'}"))
    for field, names, wanted in (("must_have_tools", test.must_have_tools, True),
                                 ("must_not_have_tools", test.must_not_have_tools, False)):
        for name in names:
            present, how = _tool_grant(caps, name)
            checks.append(_check(field, present == wanted, f"{how}; expected {'granted' if wanted else 'not granted'}"))
    for field, names, granted, wanted in (
        ("must_have_skills", test.must_have_skills, caps.skills, True),
        ("must_not_have_skills", test.must_not_have_skills, caps.skills, False),
    ):
        for name in names:
            present = name in granted
            checks.append(_check(field, present == wanted, f"skill {name!r} {'is' if present else 'is not'} granted"
                                 f" (granted skills: {', '.join(granted) or 'none'})"))
    for name in test.must_have_subagents:
        found = name in caps.subagents or name + postfix in caps.subagents
        checks.append(_check("must_have_subagents", found, f"subagent {name!r} {'is' if found else 'is not'} granted"
                             f" (granted: {', '.join(caps.subagents) or 'none'})"))
    return checks
