"""Persist the engine's caches under `.oac/` between runs: the compiler's render memo and the test-key cache.

Both are caches, and a cache is only used once verified: each file starts with the xxh3-128 digest of the
rest, and a file whose digest does not match (damaged, edited, truncated) is a miss with one warning; a file
that is missing or not a regular file is a miss. Writes go through `fsio` (atomic, never through a symlink
planted in `.oac/`; concurrent runs simply race to the same content). `oac compile` never reads these.

The key cache's payload is JSON, each scope's keys packed into two strings. The render memo's is a JSON index
(each entry's key and length) followed by the rendered bytes, one after the other: decoding 1.6 MB of rendered
agents as JSON strings took 42 M instructions of a warm 5,000-test run (1.2 %), slicing them out of one read ~3 M.
"""

import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from open_agent_compiler import fsio
from open_agent_compiler.compiler.render_memo import RenderMemo
from open_agent_compiler.model.hashing import digest_bytes
from open_agent_compiler.keys.cache import KeyCache


T = TypeVar("T")
_MEMO_FORMAT = b"oac render memo 2\n"  # the render memo's payload starts with this line


def _read_payload(path: Path) -> bytes | None:
    """The cache file's payload once its digest is verified; None: a miss."""
    path = Path(os.path.abspath(path))
    try:
        entry = fsio.inspect(fsio.trusted_root(path), str(path))
    except fsio.OacError:
        return None  # unreachable without following a symlink: a miss (writing it back says why, in one line)
    if entry.data is None:
        return None
    head, newline, payload = entry.data.partition(b"\n")
    if not newline or digest_bytes(payload) != head.decode("ascii", "replace"):
        if not entry.data.startswith(b"{"):  # a cache from before digests were stored is silently rebuilt
            print(f"oac: warning: {path} failed its integrity check; ignored (it is rebuilt)", file=sys.stderr)
        return None
    return payload


def _read_entries(path: Path) -> dict[str, Any]:
    payload = _read_payload(path)
    if payload is None:
        return {}
    try:
        entries = json.loads(payload)["entries"]
    except (ValueError, KeyError, TypeError):
        return {}
    return entries if isinstance(entries, dict) else {}


def _write_payload(path: Path, payload: bytes) -> None:
    path = Path(os.path.abspath(path))
    # not fsynced: a cache torn by a crash fails its digest and is rebuilt
    fsio.write_file(fsio.trusted_root(path), str(path), digest_bytes(payload).encode() + b"\n" + payload,
                    durable=False, show=str(path))


def save_or_skip(save: Callable[[Path, T], None], path: Path, value: T) -> None:
    """`save(path, value)`; when something not ours is in the cache's place (a folder, a link, a file where its
    folder goes) the cache cannot be used, which only costs time: one warning, the run goes on (issue 32)."""
    try:
        save(path, value)
    except fsio.OacError as exc:
        if not _in_the_way(Path(os.path.abspath(path))):
            raise  # (a full disk, a read-only folder: the state's problem, one line and exit 2)
        print(f"oac: warning: cache not saved ({exc}); the next run recomputes it", file=sys.stderr)


def _in_the_way(path: Path) -> bool:
    """Something other than a regular file at `path`, or other than a real folder at its parent."""
    def kind(where: Path) -> str:
        return fsio.kind_of(where.lstat().st_mode) if where.is_symlink() or where.exists() else "absent"
    return kind(path) not in ("absent", "file") or kind(path.parent) not in ("absent", "directory")


def _write_entries(path: Path, entries: dict[str, Any]) -> None:
    _write_payload(path, json.dumps({"entries": entries}, separators=(",", ":")).encode())  # one C-encoded string


def memo_entries(payload: bytes) -> dict[str, bytes]:
    """The render memo's entries from its verified payload; {} for any other format (an older memo: rebuilt)."""
    if not payload.startswith(_MEMO_FORMAT):
        return {}
    newline = payload.find(b"\n", len(_MEMO_FORMAT))
    if newline < 0:
        return {}
    try:
        listed = json.loads(payload[len(_MEMO_FORMAT):newline])
    except ValueError:
        return {}
    if not isinstance(listed, list):
        return {}
    entries: dict[str, bytes] = {}
    view = memoryview(payload)  # (each entry copied out once: the 1.6 MB payload is not copied whole)
    at, end = newline + 1, len(payload)
    for item in listed:
        if not (isinstance(item, list) and len(item) == 2 and isinstance(item[0], str) and type(item[1]) is int
                and 0 <= item[1] <= end - at):
            return {}
        entries[item[0]] = bytes(view[at:at + item[1]])
        at += item[1]
    return entries if at == end else {}


def memo_payload(entries: dict[str, bytes]) -> bytes:
    """What `memo_entries` reads back as `entries`."""
    index = json.dumps([[key, len(value)] for key, value in entries.items()], separators=(",", ":"))
    return b"".join((_MEMO_FORMAT, index.encode(), b"\n", *entries.values()))


def load_memo(path: Path) -> RenderMemo:
    payload = _read_payload(path)
    return RenderMemo(memo_entries(payload) if payload is not None else {})


def save_memo(path: Path, memo: RenderMemo) -> None:
    """Write the entries this run used."""
    if memo.changed:
        _write_payload(path, memo_payload(memo.live_entries()))


_KEY_WIDTH = 32  # characters of a test key (xxh3-128, hex)


def _packed_keys(keys: dict[str, str]) -> list[str] | dict[str, str]:
    """One scope's {test id → key} as [ids joined by newlines, keys run together]: two JSON strings, not two per
    test (decoding 10,000 small strings was most of a warm run's key-cache read). Kept as the dict when a test id
    holds a newline or a key is not one digest wide."""
    if all(len(key) == _KEY_WIDTH for key in keys.values()) and not any("\n" in test_id for test_id in keys):
        return ["\n".join(keys), "".join(keys.values())]
    return keys


def _unpacked_keys(value: Any) -> dict[str, str] | None:
    """What `_packed_keys` was given; None for anything else."""
    if isinstance(value, dict):
        return value if all(isinstance(v, str) for v in value.values()) else None
    if not (isinstance(value, list) and len(value) == 2 and isinstance(value[0], str) and isinstance(value[1], str)):
        return None
    ids, keys = value
    names = ids.split("\n") if keys else []  # ("" holds one empty id, or none)
    if len(keys) != _KEY_WIDTH * len(names):
        return None
    return dict(zip(names, (keys[at:at + _KEY_WIDTH] for at in range(0, len(keys), _KEY_WIDTH))))


def load_key_cache(path: Path) -> KeyCache:
    entries = _read_entries(path)
    return KeyCache({scope: keys for scope, value in entries.items() if (keys := _unpacked_keys(value)) is not None})


def save_key_cache(path: Path, cache: KeyCache) -> None:
    """Write the scopes this run used."""
    if cache.changed:
        _write_entries(path, {scope: _packed_keys(keys) for scope, keys in cache.kept.items()})
