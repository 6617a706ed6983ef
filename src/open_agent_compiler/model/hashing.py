"""Stable content digests (xxh3-128) of definitions and bytes."""

import json
from typing import Any

import xxhash
from pydantic import BaseModel


def digest_bytes(data: bytes) -> str:
    return xxhash.xxh3_128_hexdigest(data)


def canonical_json(value: Any) -> str:
    if isinstance(value, BaseModel):
        value = value.model_dump(mode="json")
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


def digest(value: Any) -> str:
    """Digest of a model or JSON-able value; equal content gives an equal digest across runs."""
    return digest_bytes(canonical_json(value).encode())
