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


def bash_overall(capabilities: Capabilities) -> tuple[str, str]:
    """(action, how) of the `bash` key itself, read from the bash rules so it means the same in every dialect:
    allowed when any rule allows, else "ask" when any rule asks, else denied (no rules = no bash)."""
    actions = set(capabilities.bash.values())
    action = next((a for a in ("allow", "ask") if a in actions), "deny")
    rules = ", ".join(f"{pattern!r}: {a}" for pattern, a in capabilities.bash.items()) or "none"
    note = " (1.16.5 counts any bash block as present)" if capabilities.bash and action != "allow" else ""
    return action, f"bash is {action!r} (rules: {rules}){note}"


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
    return action, (f"bash {command!r} is {action!r} by the last matching rule {pattern!r} (1.16.5 would look the"
                    " exact pattern up only)")


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
        """(action, how) per check. A `bash_pattern` is judged under bash: with `permission_key="bash"` (or none)
        the pattern alone decides, as in the public package. The `bash` key alone is read from the bash rules
        (`bash_overall`), so it means the same in every dialect whatever key the read-back lists."""
        found = []
        if self.permission_key == "bash" and not self.bash_pattern:
            found.append(bash_overall(capabilities))
        elif self.permission_key and self.permission_key != "bash":
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
        details: dict[str, object] = {"value": checks[-1][0]}
        if self.permission_key and not self.bash_pattern and self.wanted == "deny":
            details["present"] = not passed
        evidence = f"{self.expectation}; " + "; ".join(how for _, how in checks)
        if self.wanted == "deny" and any(action == "ask" for action, _ in checks):
            evidence += " (ask counts as present here; 1.16.5 counts only allow)"
        return self.result(passed, evidence, details=details)
