"""The shared core of `equals` and `json_path`: compare the target (or a dotted path into it) to a value."""

from typing import Any

from open_agent_compiler.testing.evaluators._paths import lookup
from open_agent_compiler.testing.evaluators._show import show
from open_agent_compiler.testing.evaluators._values import same_value


def compare_at(target: Any, path: str | None, expected: Any) -> tuple[bool, str]:
    """(passed, evidence). A `None` target is a value like any other; a missing path segment fails."""
    if path is None:
        actual = target
        where = "target"
    else:
        found = lookup(target, path)
        if not found.found:
            return False, f"expected {show(expected)} at {path!r}; {found.problem}"
        actual = found.value
        where = repr(path)
    verdict = "matches" if same_value(actual, expected) else "differs"
    return verdict == "matches", f"{where}: expected {show(expected)}, found {show(actual)} ({verdict})"
