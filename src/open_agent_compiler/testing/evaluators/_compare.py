"""The shared core of `equals` and `json_path`: compare the target (or a dotted path into it) to a value."""

from typing import Any

from open_agent_compiler.testing.evaluators._paths import lookup
from open_agent_compiler.testing.evaluators._show import show
from open_agent_compiler.testing.evaluators._values import same_value


def compare_at(target: Any, path: str | None, expected: Any) -> tuple[bool, str, dict[str, Any]]:
    """(passed, evidence, details). A `None` target is a value like any other; a missing path segment fails
    (its `actual` is None in the details)."""
    if path is None:
        actual = target
        where = "target"
    else:
        found = lookup(target, path)
        if not found.found:
            return False, f"expected {show(expected)} at {path!r}; {found.problem}", {"actual": None,
                                                                                      "expected": expected}
        actual = found.value
        where = repr(path)
    verdict = "matches" if same_value(actual, expected) else "differs"
    evidence = f"{where}: expected {show(expected)}, found {show(actual)} ({verdict})"
    return verdict == "matches", evidence, {"actual": actual, "expected": expected}
