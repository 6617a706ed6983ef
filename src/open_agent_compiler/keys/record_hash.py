"""The `composite_hash` a results record carries, in the form the seed documents: a SHA-256 hex digest. It is
taken over the test's key (`keys.key`, xxhash inside for speed), which covers the agent state, model, mock set,
access profile, variant and everything else the test reads; equal keys give equal hashes and no two keys share one."""

import hashlib


def composite_hash(key: str) -> str:
    """The record's `composite_hash` of the test key `key` (64 lowercase hex digits)."""
    return hashlib.sha256(key.encode("utf-8")).hexdigest()
