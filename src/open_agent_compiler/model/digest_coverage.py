"""Where JSON would blur a model: the positions `digest_model_json` must tag and does not.

JSON writes a tuple and a list alike, `{1: x}` and `{"1": x}` alike, NaN and None alike (pydantic writes `null`),
a set in its hash order. Where the declared type fixes the runtime type that costs nothing: a `tuple[str, ...]`
field never holds a list. Where it does not (`Any`, a bare `dict`, a float that may be NaN or ±inf, a union of
two types JSON writes alike), the position must be `AnyValue` or carry `FAITHFUL` (model/hashing.py), or the
digest is only as faithful as JSON. `unmarked_positions` names every such position a model class can reach.
"""

import types
import typing
from typing import Annotated, Any, Literal, get_args, get_origin

import annotated_types
from pydantic import BaseModel, PlainSerializer, WrapSerializer

from open_agent_compiler.model.hashing import FAITHFUL, AnyValue

_MARKS = (get_args(AnyValue)[1], FAITHFUL)
_PLAIN = (str, int, bool, type(None))
_ARRAYS = (list, tuple, set, frozenset)  # what JSON writes as an array
_STRINGS = (str, bytes, bytearray)  # what JSON writes as a string (of the types a position may declare)
_UNIONS = (typing.Union, types.UnionType)


def unmarked_positions(model: type[BaseModel], seen: set[type] | None = None) -> list[str]:
    """`"Class.field: why"` for every position of `model`, and of every model its fields declare (recursively),
    that JSON could blur and nothing marks. Fields excluded from dumps are not digested and not looked at."""
    seen = set() if seen is None else seen
    if model in seen:
        return []
    seen.add(model)
    found: list[str] = []
    name = model.__qualname__
    if model.model_config.get("extra") == "allow":
        found.append(f"{name}: extra fields are serialized by inference")
    decorators = model.__pydantic_decorators__
    if decorators.field_serializers or decorators.model_serializers:
        found.append(f"{name}: a custom serializer (JSON mode may differ from the Python dump)")
    for field_name, field in model.model_fields.items():
        if field.exclude:
            continue
        annotation = Annotated[(field.annotation, *field.metadata)] if field.metadata else field.annotation
        _walk(annotation, f"{name}.{field_name}", found, seen)
    return found


def _is_mark(item: object) -> bool:
    return any(item is mark for mark in _MARKS)


def _bounded(metadata: tuple[Any, ...]) -> bool:
    """A float whose metadata bounds it below and above (pydantic rejects NaN and ±inf there)."""
    low = any(isinstance(m, (annotated_types.Ge, annotated_types.Gt)) for m in metadata)
    high = any(isinstance(m, (annotated_types.Le, annotated_types.Lt)) for m in metadata)
    finite = any(getattr(m, "allow_inf_nan", None) is False for m in metadata)
    return (low and high) or finite


def _walk(annotation: Any, where: str, found: list[str], seen: set[type], metadata: tuple[Any, ...] = ()) -> None:
    origin = get_origin(annotation)
    if origin is Annotated:
        inner, *extra = get_args(annotation)
        if any(_is_mark(item) for item in extra):
            return  # tagged whole while digesting
        if any(isinstance(item, (PlainSerializer, WrapSerializer)) for item in extra):
            found.append(f"{where}: a serializer of its own (JSON mode may differ)")
        _walk(inner, where, found, seen, (*metadata, *extra))
        return
    if annotation is Any:
        found.append(f"{where}: Any")
    elif annotation is float:
        if not _bounded(metadata):
            found.append(f"{where}: a float that may be NaN or inf (JSON: null)")
    elif annotation in _PLAIN or origin is Literal:
        pass
    elif isinstance(annotation, type) and issubclass(annotation, BaseModel):
        found.extend(unmarked_positions(annotation, seen))
    elif annotation in (dict, list, tuple, set, frozenset):
        found.append(f"{where}: a bare {annotation.__name__} (its items are Any)")
    elif origin in (set, frozenset):
        found.append(f"{where}: a {origin.__name__} (JSON writes it in hash order)")
    elif origin in (dict, list, tuple) and not get_args(annotation):  # `typing.Dict`, `typing.List`: items Any
        found.append(f"{where}: a bare {origin.__name__} (its items are Any)")
    elif origin is dict:
        key, value = get_args(annotation)
        if key is not str:
            found.append(f"{where}: dict keys of type {key!r} (JSON writes every key as a string)")
        _walk(value, f"{where}[value]", found, seen)
    elif origin in (list, tuple):
        for index, item in enumerate(get_args(annotation)):
            if item is not Ellipsis:
                _walk(item, f"{where}[{index}]", found, seen)
    elif origin in _UNIONS:
        members = get_args(annotation)
        kinds = [get_origin(m) or m for m in members]
        for group in (_ARRAYS, _STRINGS):
            if sum(1 for kind in kinds if kind in group) > 1:
                found.append(f"{where}: a union of types JSON writes alike ({annotation})")
        for member in members:
            _walk(member, where, found, seen, metadata)
    elif isinstance(annotation, type) and issubclass(annotation, (bytes, bytearray, str)):
        pass  # a declared type: JSON never meets another type there
    else:
        found.append(f"{where}: a type JSON may blur ({annotation!r})")
