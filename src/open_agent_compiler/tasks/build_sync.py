"""Keep `.oac/build/<config>/<dialect>` equal to the compiled output, touching only what changed.

The build directory is a cache that only the engine writes, so instead of the user-facing writer (which
re-checks every path of a user's tree against symlinks and manifests) it trusts what the compile task saved
last time — each file's digest, size and mtime — and rewrites a file only when its content changed or the
file on disk is no longer the one it wrote. An edit to one agent rewrites one file. Paths were validated
when the output was built.
"""

import os
import tempfile
from pathlib import Path

from open_agent_compiler.model.hashing import digest_bytes

Stamp = list  # [digest, size, mtime_ns]: JSON-friendly, kept in the compile task's saved values


def _write(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, temp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.replace(temp, path)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise


def _on_disk(path: Path) -> tuple[int, int] | None:
    try:
        stat = path.stat()
    except OSError:
        return None
    return stat.st_size, stat.st_mtime_ns


def sync_build(files: dict[str, bytes], build_dir: Path, previous: dict[str, Stamp]) -> dict[str, Stamp]:
    """Bring `build_dir` to `files`; return the stamps to pass as `previous` next time."""
    stamps: dict[str, Stamp] = {}
    for path, data in files.items():
        target = build_dir / path
        content = digest_bytes(data)
        old = previous.get(path)
        seen = _on_disk(target)
        if not (old and old[0] == content and seen is not None and tuple(old[1:]) == seen):
            _write(target, data)
            seen = _on_disk(target)
        stamps[path] = [content, *(seen or (0, 0))]
    for path in previous.keys() - files.keys():
        (build_dir / path).unlink(missing_ok=True)
    return stamps
