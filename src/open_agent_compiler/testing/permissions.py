"""The effective action of a permission key or bash pattern in a compiled artifact's `Capabilities`."""

from open_agent_compiler.model.core.capabilities import Capabilities


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
