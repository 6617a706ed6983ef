"""Persist the engine's caches under `.oac/` between runs: the compiler's render memo and the test-key cache.

Both are caches: unreadable means empty, and a write replaces the file atomically (concurrent runs simply race
to the same content).
"""

import json
import os
import tempfile
from pathlib import Path
from typing import Any

from open_agent_compiler.compiler.render_memo import RenderMemo
from open_agent_compiler.testing.key_cache import KeyCache


def _read_entries(path: Path) -> dict[str, Any]:
    try:
        entries = json.loads(path.read_text(encoding="utf-8"))["entries"]
    except (OSError, ValueError, KeyError, TypeError):
        return {}
    return entries if isinstance(entries, dict) else {}


def _write_entries(path: Path, entries: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, temp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:  # dumps: one C-encoded string, not chunks
            handle.write(json.dumps({"entries": entries}, separators=(",", ":")))
        os.replace(temp, path)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise


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
