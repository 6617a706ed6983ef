"""Persist the compiler's render memo under `.oac/` between runs (a cache: unreadable means empty)."""

import json
import os
import tempfile
from pathlib import Path

from open_agent_compiler.compiler.render_memo import RenderMemo


def load_memo(path: Path) -> RenderMemo:
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
        entries = {str(k): v.encode("utf-8") for k, v in raw["entries"].items()}
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        entries = {}
    return RenderMemo(entries)


def save_memo(path: Path, memo: RenderMemo) -> None:
    """Write the entries this run used, atomically; concurrent runs simply race to the same content."""
    if not memo.changed:
        return
    data = {"entries": {key: value.decode("utf-8") for key, value in memo.live_entries().items()}}
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, temp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(data, handle, separators=(",", ":"))
        os.replace(temp, path)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise
