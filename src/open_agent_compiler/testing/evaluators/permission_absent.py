"""`permission_absent`: the compiled agent denies (or does not list) `permission_key` and/or `bash_pattern`."""

from typing import Literal

from pydantic import model_validator

from open_agent_compiler.model.core.evaluator import EvaluationContext, Evaluator, EvaluatorResult
from open_agent_compiler.testing.permissions import bash_action, permission_action


class PermissionAbsentEvaluator(Evaluator):
    """Every given check must resolve to "deny": "ask" counts as present. A bash pattern that is not listed
    is only absent if the `*` fallback is missing or denies. Skips when there are no permissions."""

    kind: Literal["permission_absent"] = "permission_absent"
    permission_key: str | None = None
    bash_pattern: str | None = None

    @model_validator(mode="after")
    def _something_to_check(self) -> "PermissionAbsentEvaluator":
        if not self.permission_key and not self.bash_pattern:
            raise ValueError("permission_absent needs permission_key and/or bash_pattern")
        return self

    def evaluate(self, context: EvaluationContext) -> EvaluatorResult:
        capabilities = context.permissions
        if capabilities is None:
            return self.skip("no permissions read from a compiled artifact")
        checks: list[tuple[str, str]] = []
        if self.permission_key:
            checks.append(permission_action(capabilities, self.permission_key))
        if self.bash_pattern:
            checks.append(bash_action(capabilities, self.bash_pattern))
        passed = all(action == "deny" for action, _ in checks)
        return self.result(passed, "expected deny or missing; " + "; ".join(how for _, how in checks))
