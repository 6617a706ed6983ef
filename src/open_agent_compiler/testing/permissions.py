"""The effective action of a permission key or bash pattern in a compiled artifact's `Capabilities`."""

from typing import ClassVar

from pydantic import model_validator

from open_agent_compiler.model.core.capabilities import Capabilities
from open_agent_compiler.model.core.evaluator import EvaluationContext, Evaluator, EvaluatorResult


def permission_action(capabilities: Capabilities, key: str) -> tuple[str, str]:
    """(action, how). A key the artifact does not list is denied."""
    action = capabilities.permissions.get(key)
    if action is None:
        return "deny", f"permission {key!r} is not set (missing = deny)"
    return action, f"permission {key!r} is {action!r}"


def bash_action(capabilities: Capabilities, pattern: str) -> tuple[str, str]:
    """(action, how). Looked up by exact pattern; otherwise the `*` fallback applies; with neither, deny.

    Patterns are not glob-matched against each other: "git *" does not cover "git status".
    """
    action = capabilities.bash.get(pattern)
    if action is not None:
        return action, f"bash pattern {pattern!r} is {action!r}"
    fallback = capabilities.bash.get("*")
    if fallback is not None:
        return fallback, f"bash pattern {pattern!r} is not listed; the '*' fallback is {fallback!r}"
    return "deny", f"bash pattern {pattern!r} is not listed and there is no '*' fallback (deny)"


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
