"""`permission_absent`: the compiled agent denies (or does not list) `permission_key` and/or `bash_pattern`."""

from typing import ClassVar, Literal

from open_agent_compiler.testing.permissions import PermissionCheck


class PermissionAbsentEvaluator(PermissionCheck):
    """Every given check must resolve to "deny": "ask" counts as present. A bash command or pattern is denied
    when the last rule matching it denies, or no rule matches. Skips when there are no permissions."""

    kind: Literal["permission_absent"] = "permission_absent"
    wanted: ClassVar[str] = "deny"
    expectation: ClassVar[str] = "expected deny or missing"
