"""Stable content digests (xxh3-128) of definitions and bytes."""

import json
from functools import cache
from pathlib import Path
from typing import Any

import xxhash
from pydantic import BaseModel
from pydantic_core import PydanticSerializationError


def digest_bytes(data: bytes) -> str:
    return xxhash.xxh3_128_hexdigest(data)


def canonical_json(value: Any) -> str:
    if isinstance(value, BaseModel):
        value = value.model_dump(mode="json")
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


def digest(value: Any) -> str:
    """Digest of a model or JSON-able value; equal content gives an equal digest across runs.

    Models are serialized by pydantic's Rust serializer in field order (stable for a given definition);
    plain values go through sorted-key JSON.
    """
    if isinstance(value, BaseModel):
        return digest_model(value)
    return digest_bytes(canonical_json(value).encode())


def digest_model(model: BaseModel, exclude: set[str] | None = None) -> str:
    try:
        return digest_bytes(model.model_dump_json(exclude=exclude).encode())
    except PydanticSerializationError:  # an exotic value inside an `Any` field: fall back to lenient JSON
        return digest_bytes(canonical_json(model.model_dump(mode="python", exclude=exclude)).encode())


PACKAGE_ROOT = Path(__file__).resolve().parent.parent


@cache
def source_fingerprint(*subpackages: str) -> str:
    """Digest of the source of this package's `subpackages` (recursively), read once per process: a cache of
    what that code computes keys on it, so editing or upgrading the code never serves an old result."""
    files = sorted(path for name in subpackages for path in (PACKAGE_ROOT / name).rglob("*.py"))
    return digest([(path.relative_to(PACKAGE_ROOT).as_posix(), digest_bytes(path.read_bytes())) for path in files])
