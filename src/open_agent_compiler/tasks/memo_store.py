"""Persist the engine's caches under `.oac/` between runs: the compiler's render memo and the test-key cache.

Both are caches, and a cache is only used once verified: each file starts with the xxh3-128 digest of the
rest, and a file whose digest does not match (damaged, edited, truncated) is a miss with one warning; a file
that is missing or not a regular file is a miss. Writes go through `fsio` (atomic, never through a symlink
planted in `.oac/`; concurrent runs simply race to the same content). `oac compile` never reads these.
"""

import json
import os
import sys
from pathlib import Path
from typing import Any

from open_agent_compiler import fsio
from open_agent_compiler.compiler.render_memo import RenderMemo
from open_agent_compiler.model.hashing import digest_bytes
from open_agent_compiler.testing.key_cache import KeyCache


def _read_entries(path: Path) -> dict[str, Any]:
    path = Path(os.path.abspath(path))
    try:
        entry = fsio.inspect(fsio.trusted_root(path), str(path))
    except fsio.OacError:
        return {}  # unreachable without following a symlink: a miss (writing it back says why, in one line)
    if entry.data is None:
        return {}
    head, newline, payload = entry.data.partition(b"\n")
    if not newline or digest_bytes(payload) != head.decode("ascii", "replace"):
        if not entry.data.startswith(b"{"):  # a cache from before digests were stored is silently rebuilt
            print(f"oac: warning: {path} failed its integrity check; ignored (it is rebuilt)", file=sys.stderr)
        return {}
    try:
        entries = json.loads(payload)["entries"]
    except (ValueError, KeyError, TypeError):
        return {}
    return entries if isinstance(entries, dict) else {}


def _write_entries(path: Path, entries: dict[str, Any]) -> None:
    path = Path(os.path.abspath(path))
    payload = json.dumps({"entries": entries}, separators=(",", ":")).encode()  # one C-encoded string
    # not fsynced: a cache torn by a crash fails its digest and is rebuilt
    fsio.write_file(fsio.trusted_root(path), str(path), digest_bytes(payload).encode() + b"\n" + payload,
                    durable=False, show=str(path))


def load_memo(path: Path) -> RenderMemo:
    entries = _read_entries(path)
    return RenderMemo({str(k): v.encode("utf-8") for k, v in entries.items() if isinstance(v, str)})


def save_memo(path: Path, memo: RenderMemo) -> None:
    """Write the entries this run used."""
    if memo.changed:
        _write_entries(path, {key: value.decode("utf-8") for key, value in memo.live_entries().items()})


def load_key_cache(path: Path) -> KeyCache:
    entries = _read_entries(path)
    return KeyCache({scope: keys for scope, keys in entries.items()
                     if isinstance(keys, dict) and all(isinstance(v, str) for v in keys.values())})


def save_key_cache(path: Path, cache: KeyCache) -> None:
    """Write the scopes this run used."""
    if cache.changed:
        _write_entries(path, cache.kept)
