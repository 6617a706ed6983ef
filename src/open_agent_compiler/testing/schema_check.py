"""A focused JSON-Schema subset, to hold a JSON tool's input and output to its own declared schemas.

Checked keywords: `type` (string, integer, number, boolean, null, array, object, or a list of them), `properties`,
`required`, `additionalProperties` (false or a schema), `items` (one schema), `enum`, `const`, `minimum`,
`maximum`, `exclusiveMinimum`, `exclusiveMaximum`, `minLength`, `maxLength`, `minItems`, `maxItems`, `anyOf`,
`oneOf`, `allOf`. Every other keyword (`$ref`, `pattern`, `format`, `if`/`then`, …) is ignored, so a schema using
them is checked only as far as this subset goes — never failed for using them. No I/O, no dependency.

Violations carry a path like `$.items[2].id`.
"""

import json
import math
import re
from collections.abc import Iterator, Mapping
from typing import Any

from open_agent_compiler.model.core.tool import ToolDefinition

_TYPE_NAMES = ("string", "integer", "number", "boolean", "null", "array", "object")
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _is_type(value: Any, name: str) -> bool:
    if name == "string":
        return isinstance(value, str)
    if name == "boolean":
        return isinstance(value, bool)
    if name == "null":
        return value is None
    if name == "array":
        return isinstance(value, (list, tuple))
    if name == "object":
        return isinstance(value, dict)
    if isinstance(value, bool):  # bool is an int in Python, never in JSON
        return False
    if name == "integer":
        return isinstance(value, int) or (isinstance(value, float) and math.isfinite(value) and value.is_integer())
    if name == "number":
        return isinstance(value, (int, float))
    return True  # an unknown type name constrains nothing


def _json_type(value: Any) -> str:
    for name in ("null", "boolean", "integer", "number", "string", "array", "object"):
        if _is_type(value, name):
            return name
    return type(value).__name__


def _key(path: str, key: str) -> str:
    return f"{path}.{key}" if _IDENTIFIER.fullmatch(key) else f"{path}[{json.dumps(key)}]"


def _short(value: Any) -> str:
    try:
        text = json.dumps(value, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _equal(a: Any, b: Any) -> bool:
    """JSON equality: 1 == 1.0, but True != 1 and "1" != 1."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_equal(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(_equal(x, y) for x, y in zip(a, b))
    return type(a) is type(b) and a == b


def violations(value: Any, schema: Any, path: str = "$") -> Iterator[str]:
    """Every way `value` breaks `schema`, each as `<path>: <what>`; nothing when it conforms."""
    if schema is False:
        yield f"{path}: no value is allowed here (schema false)"
        return
    if not isinstance(schema, dict):  # `true`, or something that is not a schema: constrains nothing
        return
    declared = schema.get("type")
    if declared is not None:
        names = [declared] if isinstance(declared, str) else list(declared) if isinstance(declared, list) else []
        names = [n for n in names if n in _TYPE_NAMES]
        if names and not any(_is_type(value, n) for n in names):
            yield f"{path}: expected {' or '.join(names)}, got {_json_type(value)} {_short(value)}"
            return
    if "const" in schema and not _equal(value, schema["const"]):
        yield f"{path}: must be {_short(schema['const'])}, got {_short(value)}"
    if isinstance(schema.get("enum"), list) and not any(_equal(value, option) for option in schema["enum"]):
        yield f"{path}: {_short(value)} is not one of {_short(schema['enum'])}"
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        yield from _number(value, schema, path)
    if isinstance(value, str):
        if isinstance(schema.get("minLength"), int) and len(value) < schema["minLength"]:
            yield f"{path}: shorter than minLength {schema['minLength']} (length {len(value)})"
        if isinstance(schema.get("maxLength"), int) and len(value) > schema["maxLength"]:
            yield f"{path}: longer than maxLength {schema['maxLength']} (length {len(value)})"
    if isinstance(value, (list, tuple)):
        yield from _array(value, schema, path)
    if isinstance(value, dict):
        yield from _object(value, schema, path)
    yield from _combinators(value, schema, path)


def _number(value: float, schema: dict[str, Any], path: str) -> Iterator[str]:
    bounds = (("minimum", lambda v, b: v >= b, ">="), ("maximum", lambda v, b: v <= b, "<="),
              ("exclusiveMinimum", lambda v, b: v > b, ">"), ("exclusiveMaximum", lambda v, b: v < b, "<"))
    for keyword, holds, sign in bounds:
        bound = schema.get(keyword)
        if isinstance(bound, (int, float)) and not isinstance(bound, bool) and not holds(value, bound):
            yield f"{path}: {_short(value)} is not {sign} {bound} ({keyword})"


def _array(value: list[Any] | tuple[Any, ...], schema: dict[str, Any], path: str) -> Iterator[str]:
    if isinstance(schema.get("minItems"), int) and len(value) < schema["minItems"]:
        yield f"{path}: fewer than minItems {schema['minItems']} items ({len(value)})"
    if isinstance(schema.get("maxItems"), int) and len(value) > schema["maxItems"]:
        yield f"{path}: more than maxItems {schema['maxItems']} items ({len(value)})"
    items = schema.get("items")
    if isinstance(items, dict):
        for index, item in enumerate(value):
            yield from violations(item, items, f"{path}[{index}]")


def _object(value: dict[str, Any], schema: dict[str, Any], path: str) -> Iterator[str]:
    required = schema.get("required")
    if isinstance(required, list):
        for name in required:
            if isinstance(name, str) and name not in value:
                yield f"{_key(path, name)}: required field is missing"
    properties = schema.get("properties") if isinstance(schema.get("properties"), dict) else {}
    for name, item in value.items():
        if not isinstance(name, str):
            yield f"{path}: key {_short(name)} is not a string"
            continue
        if name in properties:
            yield from violations(item, properties[name], _key(path, name))
            continue
        extra = schema.get("additionalProperties", True)
        if extra is False:
            yield f"{_key(path, name)}: field not allowed (additionalProperties is false)"
        elif isinstance(extra, dict):
            yield from violations(item, extra, _key(path, name))


def _combinators(value: Any, schema: dict[str, Any], path: str) -> Iterator[str]:
    all_of = schema.get("allOf")
    if isinstance(all_of, list):
        for part in all_of:
            yield from violations(value, part, path)
    any_of = schema.get("anyOf")
    if isinstance(any_of, list) and any_of:
        failures = [list(violations(value, part, path)) for part in any_of]
        if all(failures):
            closest = min(failures, key=len)
            yield f"{path}: matches none of anyOf ({len(any_of)} options); closest: {closest[0]}"
    one_of = schema.get("oneOf")
    if isinstance(one_of, list) and one_of:
        failures = [list(violations(value, part, path)) for part in one_of]
        matched = sum(1 for f in failures if not f)
        if matched == 0:
            closest = min(failures, key=len)
            yield f"{path}: matches none of oneOf ({len(one_of)} options); closest: {closest[0]}"
        elif matched > 1:
            yield f"{path}: matches {matched} of oneOf's options, exactly one allowed"


def first_violation(value: Any, schema: Any) -> str | None:
    """The first way `value` breaks `schema`, or None."""
    return next(violations(value, schema), None)


def input_violation(tool: ToolDefinition, payload: Mapping[str, Any]) -> str | None:
    """How a tool test's input breaks the JSON tool's declared `input_schema`, or None."""
    schema = tool.json_tool.input_schema if tool.json_tool else None
    if schema is None:
        return None
    broken = first_violation(dict(payload), schema)
    return f"test input breaks tool {tool.name!r}'s input_schema: {broken}" if broken else None


def output_violation(tool: ToolDefinition, output: Any, source: str | None) -> str | None:
    """How a mock's or handler's output breaks the JSON tool's declared `output_schema`, or None."""
    schema = tool.json_tool.output_schema if tool.json_tool else None
    if schema is None:
        return None
    broken = first_violation(output, schema)
    origin = "handler" if source in (None, "handler") else f"mock {source}"
    return f"{origin} output breaks tool {tool.name!r}'s output_schema: {broken}" if broken else None
