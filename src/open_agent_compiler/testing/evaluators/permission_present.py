"""`permission_present`: the compiled agent allows `permission_key` and/or `bash_pattern`."""

from typing import ClassVar, Literal

from open_agent_compiler.testing.permissions import PermissionCheck


class PermissionPresentEvaluator(PermissionCheck):
    """Every given check must have the action "allow" ("ask" is not allowed). A missing key is denied; a bash
    pattern is looked up exactly, else through the `*` fallback. Skips when there are no permissions."""

    kind: Literal["permission_present"] = "permission_present"
    wanted: ClassVar[str] = "allow"
    expectation: ClassVar[str] = "expected allow"
