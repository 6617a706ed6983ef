"""Dotted paths into JSON-like values: `items.0.name` walks dict keys and non-negative list indices."""

import re
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict

_INDEX = re.compile(r"\d+")


class PathLookup(BaseModel):
    """Where a path walk ended: the value found, or the first segment that does not exist and why."""

    model_config = ConfigDict(frozen=True, defer_build=True)  # warm runs use none

    found: bool
    value: Any = None
    missing_segment: str | None = None
    problem: str = ""


def parse_path(path: str) -> tuple[str, ...]:
    """Split a dotted path; every segment must be non-empty."""
    segments = tuple(path.split("."))
    if not path or "" in segments:
        raise ValueError(f"dotted path {path!r} has an empty segment")
    return segments


def _describe(value: Any) -> str:
    if isinstance(value, Mapping):
        keys = ", ".join(repr(key) for key in list(value)[:10])
        more = ", …" if len(value) > 10 else ""
        return f"object with keys [{keys}{more}]"
    if isinstance(value, (list, tuple)):
        return f"list of {len(value)} item(s)"
    return f"{type(value).__name__} value"


def _step(value: Any, segment: str) -> tuple[bool, Any]:
    if isinstance(value, Mapping):
        if segment in value:
            return True, value[segment]
        if _INDEX.fullmatch(segment) and int(segment) in value:  # dicts with int keys (not from JSON)
            return True, value[int(segment)]
        return False, None
    if isinstance(value, (list, tuple)) and _INDEX.fullmatch(segment):
        index = int(segment)
        if index < len(value):
            return True, value[index]
    return False, None


def lookup(value: Any, path: str) -> PathLookup:
    """Walk `path` into `value`. Never raises for a missing segment: the result names it instead."""
    segments = parse_path(path)
    current = value
    for position, segment in enumerate(segments):
        ok, child = _step(current, segment)
        if not ok:
            parent = ".".join(segments[:position]) or "<target>"
            problem = f"segment {segment!r} of path {path!r} is missing: {parent} is a {_describe(current)}"
            return PathLookup(found=False, missing_segment=segment, problem=problem)
        current = child
    return PathLookup(found=True, value=current)
