"""`permission_present`: the compiled agent allows `permission_key` and/or `bash_pattern`."""

from typing import Literal

from pydantic import model_validator

from open_agent_compiler.model.core.evaluator import EvaluationContext, Evaluator, EvaluatorResult
from open_agent_compiler.testing.permissions import bash_action, permission_action


class PermissionPresentEvaluator(Evaluator):
    """Every given check must have the action "allow" ("ask" is not allowed). A missing key is denied; a bash
    pattern is looked up exactly, else through the `*` fallback. Skips when there are no permissions."""

    kind: Literal["permission_present"] = "permission_present"
    permission_key: str | None = None
    bash_pattern: str | None = None

    @model_validator(mode="after")
    def _something_to_check(self) -> "PermissionPresentEvaluator":
        if not self.permission_key and not self.bash_pattern:
            raise ValueError("permission_present needs permission_key and/or bash_pattern")
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
        passed = all(action == "allow" for action, _ in checks)
        return self.result(passed, "expected allow; " + "; ".join(how for _, how in checks))
