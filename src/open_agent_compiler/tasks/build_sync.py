"""Keep `.oac/build/<config>/<dialect>` equal to the compiled output, touching only what changed.

The build directory is a cache that only the engine writes, so instead of the user-facing writer (which
re-checks every path of a user's tree against symlinks and manifests) it trusts what the compile task saved
last time — each file's digest, size and mtime — and rewrites a file only when its content changed or the
file on disk is no longer the one it wrote. An edit to one agent rewrites one file. Paths were validated
when the output was built. Files are written and removed through `fsio`: atomically, and never through a
symlink planted in `.oac/` (refused with one line).
"""

import os
from pathlib import Path

from open_agent_compiler import fsio
from open_agent_compiler.model.hashing import digest_bytes

Stamp = list  # [digest, size, mtime_ns]: JSON-friendly, kept in the compile task's saved values


def _on_disk(path: Path) -> tuple[int, int] | None:
    try:
        stat = os.lstat(path)  # a symlink planted here is not the file we wrote: it is rewritten (and refused)
    except OSError:
        return None
    return stat.st_size, stat.st_mtime_ns


def build_intact(build_dir: Path, stamps: dict[str, Stamp]) -> bool:
    """Every file the compile task wrote is still there as it left it (size and mtime: one lstat each), so a
    harness never runs from a build someone edited or replaced since."""
    build_dir = Path(os.path.abspath(build_dir))
    return all(_on_disk(build_dir / path) == (stamp[1], stamp[2]) for path, stamp in stamps.items())


def sync_build(files: dict[str, bytes], build_dir: Path, previous: dict[str, Stamp]) -> dict[str, Stamp]:
    """Bring `build_dir` to `files`; return the stamps to pass as `previous` next time."""
    stamps: dict[str, Stamp] = {}
    build_dir = Path(os.path.abspath(build_dir))
    root = fsio.trusted_root(build_dir / "x")  # the project holding `.oac/`: nothing below it is followed
    fsio.ensure_dir(root, str(build_dir), show=str(build_dir))
    for path, data in files.items():
        target = build_dir / path
        content = digest_bytes(data)
        old = previous.get(path)
        seen = _on_disk(target)
        if not (old and old[0] == content and seen is not None and tuple(old[1:]) == seen):
            # not fsynced: the stamps catch a file a crash left short, and it is written again
            fsio.write_file(root, str(target), data, durable=False, show=str(target))
            seen = _on_disk(target)
        stamps[path] = [content, *(seen or (0, 0))]
    for path in previous.keys() - files.keys():
        fsio.remove_file(root, str(build_dir / path))
    return stamps
