"""`permission_present`: the compiled agent allows `permission_key` and/or `bash_pattern`."""

from typing import ClassVar, Literal

from open_agent_compiler.testing.permissions import PermissionCheck


class PermissionPresentEvaluator(PermissionCheck):
    """Every given check must have the action "allow" ("ask" is not allowed). A missing key gets the `*`
    catch-all, else is denied; a bash command or pattern is matched as the dialect's harness matches it (see
    `testing.permissions.bash_action`). Skips when there are no permissions."""

    kind: Literal["permission_present"] = "permission_present"
    wanted: ClassVar[str] = "allow"
    expectation: ClassVar[str] = "expected allow"
