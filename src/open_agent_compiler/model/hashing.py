"""Stable content digests (xxh3-128) of definitions and bytes.

A digest is taken over a type-faithful canonical form: JSON alone would make `{"200": "ok"}` and `{200: "ok"}`,
a tuple and a list, or 1 and True hash the same, and any of them can change a result. Models are dumped by
pydantic (Rust) to Python data, which pickle (C, protocol 4, no memo) writes with every type kept; a value pickle
cannot take falls back to a type-tagged JSON form (non-JSON values wrapped in tags a plain value cannot produce).
Dict order counts (an equal dict built in another order only costs a re-run, never a stale pass).

`digest_model_json` is the faster form for a model whose every position JSON could blur is marked (`AnyValue`,
`FAITHFUL`; a resolved agent's content digest): pydantic writes the model's JSON from Rust, and while it digests,
each marked position writes its `tagged` form instead (outside a digest it serializes as it always did).
"""

import io
import json
import os
import pickle
from contextvars import ContextVar
from functools import cache
from pathlib import Path
from typing import Annotated, Any

import xxhash
from pydantic import BaseModel, PlainSerializer, WrapSerializer

_TAG = "__oac_"
_SCALARS = (str, int, bool, type(None))  # as JSON writes them, each kept apart (1, true, "1", null)


def digest_bytes(data: bytes) -> str:
    return xxhash.xxh3_128_hexdigest(data)


def _sort_key(item: Any) -> str:
    return json.dumps(item, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def tagged(value: Any) -> Any:
    """`value` as JSON-ready data that keeps every distinction JSON would lose."""
    kind = type(value)
    if kind in _SCALARS:
        return value
    if kind is float:  # finite: JSON writes the shortest exact form (-0.0 too); NaN and ±inf: tagged
        return value if value - value == 0 else {_TAG + "float": repr(value)}
    if kind is dict:
        for key, item in value.items():  # str keys and scalar values (the common case): as JSON writes them
            if type(key) is not str or type(item) not in _SCALARS or key.startswith(_TAG):
                break
        else:
            return value
        if all(type(k) is str and not k.startswith(_TAG) for k in value):
            return {k: tagged(v) for k, v in value.items()}
        pairs = [[tagged(k), tagged(v)] for k, v in value.items()]
        return {_TAG + "dict": sorted(pairs, key=_sort_key)}
    if kind is list:
        for item in value:
            if type(item) not in _SCALARS:
                return [tagged(v) for v in value]
        return value
    if kind is tuple:
        return {_TAG + "tuple": [tagged(v) for v in value]}
    if isinstance(value, BaseModel):
        return {_TAG + "model": f"{kind.__module__}.{kind.__qualname__}", "fields": tagged(_fields(value))}
    if isinstance(value, (set, frozenset)):
        return {_TAG + kind.__name__: sorted((tagged(v) for v in value), key=_sort_key)}
    if isinstance(value, (bytes, bytearray)):
        return {_TAG + "bytes": bytes(value).hex()}
    if isinstance(value, Path):
        return {_TAG + "path": value.as_posix()}
    plain = getattr(value, "value", None) if hasattr(type(value), "__members__") else None
    if plain is not None:  # an Enum member: its class and value
        return {_TAG + "enum": f"{kind.__module__}.{kind.__qualname__}", "value": tagged(plain)}
    try:  # any other object (a str or int subclass, a dataclass, ...): its pickled state, as the pickled form keeps
        return {_TAG + "other": f"{kind.__module__}.{kind.__qualname__}", "pickle": _pickled(value).hex()}
    except Exception:  # noqa: BLE001 - an object pickle cannot take: its repr
        return {_TAG + "other": f"{kind.__module__}.{kind.__qualname__}", "repr": repr(value)}


def _fields(model: BaseModel, exclude: set[str] | None = None) -> dict[str, Any]:
    """A model's declared fields (and extras), not whatever else sits in its `__dict__` (cached properties)."""
    values = {name: getattr(model, name) for name in type(model).model_fields if not exclude or name not in exclude}
    if model.model_extra:
        values.update({f"{_TAG}extra:{k}": v for k, v in model.model_extra.items()})
    return values


def canonical_json(value: Any) -> str:
    return json.dumps(tagged(value), sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _pickled(value: Any) -> bytes:
    """Type-faithful bytes of plain data, from C: pickle keeps int vs str keys, tuple vs list, 1 vs 1.0 vs True.
    Fast mode keeps no memo, so equal content gives equal bytes whatever objects it shares."""
    buffer = io.BytesIO()
    pickler = pickle.Pickler(buffer, protocol=4)
    pickler.fast = True
    pickler.dump(value)
    return buffer.getvalue()


def _canonical_bytes(value: Any) -> bytes:
    try:
        return b"p" + _pickled(value)
    except Exception:  # noqa: BLE001 - an object pickle cannot take: the tagged JSON form
        return b"j" + canonical_json(value).encode("utf-8", "surrogatepass")


def digest(value: Any) -> str:
    """Digest of a model or any value; equal content (and equal types) gives an equal digest across runs."""
    if isinstance(value, BaseModel):
        return digest_model(value)
    return digest_bytes(_canonical_bytes(value))


def digest_model(model: BaseModel, exclude: set[str] | None = None) -> str:
    kind = type(model)
    return digest_dumped(f"{kind.__module__}.{kind.__qualname__}", model.model_dump(mode="python", exclude=exclude))


def digest_dumped(qualified_name: str, dumped: dict[str, Any]) -> str:
    """What `digest_model` gives a model of that class whose `model_dump(mode="python")` is `dumped`."""
    return digest_bytes(_canonical_bytes((qualified_name, dumped)))


# Set only while `digest_model_json` writes a model: a context variable, so a dump in another thread or task
# serializes as it always did.
_digesting: ContextVar[bool] = ContextVar("oac_digesting", default=False)


def _faithful_any(value: Any) -> Any:
    if type(value) in _SCALARS or not _digesting.get():  # (a scalar: JSON keeps it apart as it is)
        return value
    return tagged(value)


# What JSON would blur, kept apart in `digest_model_json`: `AnyValue` is the `Any` of a field (or of a dict's
# values, a tuple's items), `FAITHFUL` marks a typed field whose type does not fix what JSON tells apart (a bare
# `dict`'s keys, a float that may be NaN or ±inf). While digesting they write `tagged(value)`; in every other JSON
# dump the value serializes as it always did (an `Any` by inference, a typed field by its type), and a Python-mode
# dump never calls them. tests/model/test_digest_coverage.py fails on a position reachable from a resolved agent
# that JSON could blur and neither marks.
AnyValue = Annotated[Any, PlainSerializer(_faithful_any, when_used="json")]
# (FAITHFUL's function is a lambda: with no return type pydantic keeps the field's own type as its serialization
# schema, so `model_json_schema(mode="serialization")` is unchanged.)
FAITHFUL = WrapSerializer(lambda value, handler: tagged(value) if _digesting.get() else handler(value),
                          when_used="json")


def digest_model_json(model: BaseModel, exclude: set[str] | None = None) -> str:
    """Digest of `model`'s JSON (pydantic, from Rust) with every `AnyValue` and `FAITHFUL` position tagged: what
    `digest_model` keeps apart, for a model whose every position JSON could blur is marked, at a fraction of its
    cost. A model JSON cannot hold (a lone surrogate) gets `digest_model`'s form, whose bytes start otherwise."""
    kind = type(model)
    token = _digesting.set(True)
    try:
        data = kind.__pydantic_serializer__.to_json(model, exclude=exclude)
    except Exception:  # noqa: BLE001 - JSON cannot hold it: the pickled form
        data = None
    finally:
        _digesting.reset(token)
    if data is None:
        return digest_model(model, exclude)
    return digest_bytes(b"J" + f"{kind.__module__}.{kind.__qualname__}".encode() + b"\n" + data)


PACKAGE_ROOT = Path(__file__).resolve().parent.parent


def source_fingerprint(*subpackages: str) -> str:
    """Digest of the source of this package's `subpackages` (recursively), read once per process: a cache of
    what that code computes keys on it, so editing or upgrading the code never serves an old result. The order
    of the names does not matter (the files are sorted): ("compiler", "model") and ("model", "compiler") are
    one fingerprint, read once."""
    return _fingerprint(tuple(sorted(subpackages)))


@cache
def _fingerprint(subpackages: tuple[str, ...]) -> str:
    # Walked and cut as text: pathlib's rglob and relative_to over ~130 files cost ~40 ms of a warm run on 3.12
    # (profiled). The files in the order pathlib sorts them (by their parts), named by their POSIX relative path.
    root = str(PACKAGE_ROOT)
    files: list[tuple[tuple[str, ...], str]] = []
    for name in subpackages:
        for folder, _, names in os.walk(os.path.join(root, name)):
            parts = tuple(os.path.relpath(folder, root).split(os.sep))
            files.extend(((*parts, file), os.path.join(folder, file)) for file in names if file.endswith(".py"))
    files.sort()
    entries = []
    for parts, path in files:
        with open(path, "rb") as handle:
            entries.append(("/".join(parts), digest_bytes(handle.read())))
    return digest(entries)


source_fingerprint.cache_clear = _fingerprint.cache_clear  # type: ignore[attr-defined]  # (as a new process)
