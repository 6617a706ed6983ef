"""The effective action of a permission key or bash pattern in a compiled artifact's `Capabilities`."""

from typing import ClassVar

from pydantic import model_validator

from open_agent_compiler.compiler.bash_match import bash_matcher, last_match
from open_agent_compiler.model.core.capabilities import Capabilities
from open_agent_compiler.model.core.evaluator import EvaluationContext, Evaluator, EvaluatorResult


def permission_action(capabilities: Capabilities, key: str) -> tuple[str, str]:
    """(action, how). A key the artifact does not list gets its `*` catch-all; with none, it is denied."""
    action = capabilities.permissions.get(key)
    if action is not None:
        return action, f"permission {key!r} is {action!r}"
    fallback = capabilities.permissions.get("*")
    if fallback is not None:
        return fallback, f"permission {key!r} is not listed; the '*' catch-all is {fallback!r}"
    return "deny", f"permission {key!r} is not set (missing = deny)"


def bash_action(capabilities: Capabilities, command: str) -> tuple[str, str]:
    """(action, how) for a command, or a pattern taken as the command text it spells ("git push *").

    Matched as the dialect's harness matches (`compiler.bash_match`): the LAST rule of `capabilities.bash`
    that matches decides (the read-back orders each harness's rules that way); no matching rule = deny.
    """
    found = last_match(capabilities.bash, command, bash_matcher(capabilities.dialect))
    if found is None:
        return "deny", f"bash {command!r} matches no rule (deny)"
    pattern, action = found
    if pattern == command:
        return action, f"bash pattern {command!r} is {action!r}"
    return action, f"bash {command!r} is {action!r} by the last matching rule {pattern!r}"


class PermissionCheck(Evaluator):
    """Shared shape of permission_present/permission_absent: every given check must resolve to `wanted`."""

    permission_key: str | None = None
    bash_pattern: str | None = None

    wanted: ClassVar[str] = "allow"  # the action every check must resolve to
    expectation: ClassVar[str] = "expected allow"

    @model_validator(mode="after")
    def _something_to_check(self) -> "PermissionCheck":
        if not self.permission_key and not self.bash_pattern:
            raise ValueError(f"{self.kind} needs permission_key and/or bash_pattern")
        return self

    def checks(self, capabilities: Capabilities) -> list[tuple[str, str]]:
        found = []
        if self.permission_key:
            found.append(permission_action(capabilities, self.permission_key))
        if self.bash_pattern:
            found.append(bash_action(capabilities, self.bash_pattern))
        return found

    def evaluate(self, context: EvaluationContext) -> EvaluatorResult:
        capabilities = context.permissions
        if capabilities is None:
            return self.skip("no permissions read from a compiled artifact")
        checks = self.checks(capabilities)
        passed = all(action == self.wanted for action, _ in checks)
        return self.result(passed, f"{self.expectation}; " + "; ".join(how for _, how in checks))
