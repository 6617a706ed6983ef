"""`permission_present`: the compiled agent allows `permission_key` and/or `bash_pattern`."""

from typing import ClassVar, Literal

from pydantic import model_validator

from open_agent_compiler.testing.permissions import PermissionCheck


class PermissionPresentEvaluator(PermissionCheck):
    """Every given check must have the action "allow" ("ask" is not allowed). A missing key is denied; a bash
    pattern is looked up exactly, else through the `*` fallback. Skips when there are no permissions."""

    kind: Literal["permission_present"] = "permission_present"
    wanted: ClassVar[str] = "allow"
    expectation: ClassVar[str] = "expected allow"

    @model_validator(mode="after")
    def _something_to_check(self) -> "PermissionPresentEvaluator":
        if not self.permission_key and not self.bash_pattern:
            raise ValueError("permission_present needs permission_key and/or bash_pattern")
        return self
