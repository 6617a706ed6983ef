"""Value comparison with JSON semantics: booleans are not numbers, tuples equal lists, dicts compare by keys."""

from collections.abc import Mapping
from typing import Any


def same_value(left: Any, right: Any) -> bool:
    """Deep equality where `True != 1` (JSON true is not 1) but `1 == 1.0` and `(1, 2) == [1, 2]`."""
    if isinstance(left, bool) or isinstance(right, bool):
        return isinstance(left, bool) and isinstance(right, bool) and left == right
    if isinstance(left, Mapping) and isinstance(right, Mapping):
        return left.keys() == right.keys() and all(same_value(left[key], right[key]) for key in left)
    if isinstance(left, (list, tuple)) and isinstance(right, (list, tuple)):
        return len(left) == len(right) and all(same_value(a, b) for a, b in zip(left, right))
    try:
        return bool(left == right)
    except Exception:  # exotic __eq__; unequal rather than a crash
        return False


def is_subset(expected: Mapping[str, Any], actual: Any) -> bool:
    """Every key of `expected` is in `actual` with the same value; nested dicts are matched as subsets too."""
    if not isinstance(actual, Mapping):
        return False
    for key, want in expected.items():
        if key not in actual:
            return False
        have = actual[key]
        if isinstance(want, Mapping) and isinstance(have, Mapping):
            if not is_subset(want, have):
                return False
        elif not same_value(want, have):
            return False
    return True
