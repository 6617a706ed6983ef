"""permission_present and permission_absent over a compiled artifact's Capabilities."""

import pytest

from open_agent_compiler.model.core.capabilities import Capabilities
from open_agent_compiler.model.core.evaluator import EvaluationContext
from open_agent_compiler.testing.evaluation import PermissionAbsentEvaluator, PermissionPresentEvaluator

CAPS = Capabilities(
    agent="echo-agent",
    dialect="opencode",
    # in read-back order: the last matching rule decides, so the catch-all comes first
    bash={"*": "deny", "uv run scripts/echo.py *": "allow", "git push *": "ask", "rm *": "deny"},
    permissions={"read": "allow", "edit": "ask", "webfetch": "deny"},
)
OPEN_FALLBACK = Capabilities(agent="a", dialect="claude", bash={"*": "allow"})
NO_FALLBACK = Capabilities(agent="a", dialect="pi")


def with_caps(capabilities: Capabilities) -> EvaluationContext:
    return EvaluationContext(permissions=capabilities)


@pytest.mark.parametrize(
    "key, present",
    [("read", True), ("edit", False), ("webfetch", False), ("write", False)],
)
def test_permission_keys(key: str, present: bool) -> None:
    assert PermissionPresentEvaluator(permission_key=key).evaluate(with_caps(CAPS)).passed is present
    absent = PermissionAbsentEvaluator(permission_key=key).evaluate(with_caps(CAPS))
    assert absent.passed is (key in ("webfetch", "write"))  # "ask" is neither allowed nor absent


@pytest.mark.parametrize(
    "caps, pattern, present, absent",
    [
        (CAPS, "uv run scripts/echo.py *", True, False),
        (CAPS, "git push *", False, False),
        (CAPS, "rm *", False, True),
        (CAPS, "curl *", False, True),  # not listed; '*' denies
        (OPEN_FALLBACK, "curl *", True, False),  # not listed; '*' allows
        (NO_FALLBACK, "curl *", False, True),
    ],
)
def test_bash_patterns(caps: Capabilities, pattern: str, present: bool, absent: bool) -> None:
    assert PermissionPresentEvaluator(bash_pattern=pattern).evaluate(with_caps(caps)).passed is present
    assert PermissionAbsentEvaluator(bash_pattern=pattern).evaluate(with_caps(caps)).passed is absent


def test_both_checks_must_hold_and_evidence_explains_each() -> None:
    result = PermissionPresentEvaluator(permission_key="read", bash_pattern="rm *").evaluate(with_caps(CAPS))
    assert not result.passed
    assert "permission 'read' is 'allow'" in result.evidence and "bash pattern 'rm *' is 'deny'" in result.evidence
    missing = PermissionAbsentEvaluator(permission_key="write").evaluate(with_caps(CAPS))
    assert missing.passed and "not set" in missing.evidence


def test_permission_checks_skip_without_permissions() -> None:
    for evaluator in (PermissionPresentEvaluator(permission_key="read"), PermissionAbsentEvaluator(bash_pattern="x")):
        result = evaluator.evaluate(EvaluationContext(target="text"))
        assert result.skipped and result.passed and "no permissions" in result.evidence


@pytest.mark.parametrize("rules, overall", [({"*": "deny", "git push *": "ask"}, "ask"),
                                            ({"*": "deny", "git push *": "ask", "ls": "allow"}, "allow"),
                                            ({"*": "deny"}, "deny"), ({}, "deny")])
def test_the_bash_key_alone_is_read_from_the_rules_ask_included(rules: dict, overall: str) -> None:
    caps = Capabilities(agent="a", dialect="opencode", bash=rules)
    present = PermissionPresentEvaluator(permission_key="bash").evaluate(with_caps(caps))
    absent = PermissionAbsentEvaluator(permission_key="bash").evaluate(with_caps(caps))
    assert (present.passed, absent.passed) == (overall == "allow", overall == "deny")
    assert f"bash is {overall!r}" in absent.evidence
