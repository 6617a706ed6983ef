"""One line for a pydantic ValidationError in a definition: the class, the field and, for an unknown field, the
closest valid name — e.g. `AgentHeader has no field 'descriptin' (did you mean 'description'?)`."""

import types
import typing
from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import BaseModel, ValidationError

from open_agent_compiler.model.core.evaluator import Evaluator


def _all_models() -> dict[str, type[BaseModel]]:
    found: dict[str, type[BaseModel]] = {}
    pending: list[type[BaseModel]] = [BaseModel]
    while pending:
        cls = pending.pop()
        for sub in cls.__subclasses__():
            if sub.__module__.startswith("open_agent_compiler.") and sub.__name__ not in found:
                found[sub.__name__] = sub
            pending.append(sub)
    return found


def _models_in(annotation: Any) -> list[type[BaseModel]]:
    """The model classes an annotation can hold (through Optional, list, tuple, dict values, Annotated)."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin is typing.Annotated:
        return _models_in(args[0])
    if origin in (dict, Mapping):
        return _models_in(args[1]) if len(args) == 2 else []
    if origin is not None or isinstance(annotation, types.UnionType):
        return [model for arg in args for model in _models_in(arg)]
    return []


def _kind_of(error_input: Any) -> type[BaseModel] | None:
    if isinstance(error_input, Mapping) and isinstance(error_input.get("kind"), str):
        return Evaluator.kinds.get(error_input["kind"])
    return None


def _owner(root: type[BaseModel] | None, loc: Sequence[Any], hints: Sequence[dict[str, Any]]) -> type[BaseModel] | None:
    """The class whose field `loc[-1]` is, walking `loc` from `root` (None when the walk gets lost)."""
    current = root
    for depth, part in enumerate(loc[:-1]):
        if current is None:
            return None
        if isinstance(part, int) or part not in current.model_fields:
            continue  # a list index or a union member tag: same class continues
        candidates = _models_in(current.model_fields[part].annotation)
        current = candidates[0] if len(candidates) == 1 else None
        if current is Evaluator:  # dispatched on `kind`: find the kind from an error about the same object
            prefix = tuple(loc[: depth + 2])
            kinds = [_kind_of(h["input"]) for h in hints if tuple(h["loc"][: len(prefix)]) == prefix]
            current = next((k for k in kinds if k is not None), Evaluator)
    return current


def _field_path(loc: Sequence[Any]) -> str:
    return ".".join(str(part) for part in loc)


def describe_validation_error(error: ValidationError) -> str:
    """One line: the first unknown field (with a suggestion) if any, else the first other problem."""
    problems = error.errors()
    if not problems:
        return f"{error.title}: invalid"
    root = _all_models().get(error.title)
    unknown = [p for p in problems if p["type"] == "extra_forbidden"]
    first = (unknown or problems)[0]
    loc = tuple(first["loc"])
    more = len(problems) - 1
    tail = f" (and {more} more problem{'s' if more > 1 else ''})" if more else ""
    where = f" at {_field_path(loc)}" if len(loc) > 1 else ""
    if first["type"] == "extra_forbidden" and loc:
        owner = _owner(root, loc, problems)
        name = str(loc[-1])
        owner_name = owner.__name__ if owner is not None else error.title
        valid = sorted(owner.model_fields) if owner is not None else []
        import difflib  # (only for a message: a run without errors never loads it)

        close = difflib.get_close_matches(name, valid, n=1, cutoff=0.5)
        if close:
            hint = f" (did you mean {close[0]!r}?)"
        elif valid:
            hint = f" (valid: {', '.join(valid[:12])}{', …' if len(valid) > 12 else ''})"
        else:
            hint = ""
        return f"{owner_name} has no field {name!r}{hint}{where.replace(' at ', ' in ', 1)}{tail}"
    message = " ".join(str(first["msg"]).split())
    field = _field_path(loc) or "value"
    return f"{error.title}.{field}: {message}{tail}"
