"""Merging our permission rules into a user's JSON settings file (Claude's `.claude/settings.json`).

The user's keys and rules always stay. We only add the rules we need and, on the next compile, take back the
rules we added last time (`previous`) before adding the current ones. A rule the user already had is never
counted as ours, so taking ours back can never remove one of theirs.
"""

import copy
from collections.abc import Mapping, Sequence
from typing import Any

from open_agent_compiler.errors import OacError

RULE_KINDS: tuple[str, ...] = ("allow", "ask", "deny")

Rules = Mapping[str, Sequence[str]]


def merge_permission_rules(
    existing: Mapping[str, Any] | None, previous: Rules, current: Rules, *, where: str
) -> tuple[dict[str, Any], dict[str, list[str]]]:
    """Return (merged settings, the rules we own now). `where` names the file in error messages."""
    data: dict[str, Any] = copy.deepcopy(dict(existing)) if existing else {}
    permissions = data.get("permissions", {})
    if not isinstance(permissions, dict):
        raise OacError(f"{where}: 'permissions' must be a JSON object")
    owned: dict[str, list[str]] = {}
    for kind in RULE_KINDS:
        rules = permissions.get(kind, [])
        if not isinstance(rules, list) or not all(isinstance(rule, str) for rule in rules):
            raise OacError(f"{where}: 'permissions.{kind}' must be a list of strings")
        ours_before = set(previous.get(kind, ()))
        kept = [rule for rule in rules if rule not in ours_before]
        added = [rule for rule in dict.fromkeys(current.get(kind, ())) if rule not in kept]
        merged = kept + added
        if merged:
            permissions[kind] = merged
        elif kind in permissions and ours_before:
            del permissions[kind]  # emptied by taking our rules back
        if added:
            owned[kind] = added
    if permissions:
        data["permissions"] = permissions
    else:
        data.pop("permissions", None)
    return data, owned
