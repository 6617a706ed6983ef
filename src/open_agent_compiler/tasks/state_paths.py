"""The engine's state under `.oac/`: checked before a run, and every OS or sqlite error on it turned into one
line that names the path (exit 2), never a traceback.

`check_state_paths` runs before any test: a `.oac` that is a file, a state database or cache file that is a
directory, a build folder that is a file, a folder oac cannot write, or a symbolic link (or other non-file)
planted anywhere oac writes under `.oac/` — oac never writes through one — are bad input, reported at once.
Errors that only show up while writing (a full disk) go through `state_error`.
"""

import os
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from doit.exceptions import InvalidDodoFile

from open_agent_compiler import fsio
from open_agent_compiler.errors import ResultsError

if TYPE_CHECKING:
    from open_agent_compiler.tasks.settings import TestOptions


class StateError(ResultsError, InvalidDodoFile):
    """oac's state cannot be used. Also a doit "user error", so raised inside doit it is printed as one line."""


def describe(exc: BaseException) -> str:
    """The reason of an OS or sqlite error, without its path (the caller names the path)."""
    if isinstance(exc, (FileExistsError, NotADirectoryError)):  # mkdir over a file, or a file as a folder
        return f"{exc.strerror}: a file is where oac needs a directory"
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror
    return " ".join(str(exc).split()) or type(exc).__name__


def state_error(path: Path | str, exc: BaseException, doing: str = "use") -> StateError:
    """`cannot <doing> <path>: <reason>`; for a failed rename the destination is the culprit, not our temp file."""
    where = getattr(exc, "filename2", None) or getattr(exc, "filename", None) or path
    return StateError(f"cannot {doing} {where}: {describe(exc)}")


@contextmanager
def on_state(path: Path | str, doing: str) -> Iterator[None]:
    """Any OS or sqlite error inside becomes a StateError naming `path`."""
    try:
        yield
    except (OSError, sqlite3.Error) as exc:
        raise state_error(path, exc, doing) from None


def _first_blocker(path: Path) -> Path | None:
    """The first existing component of `path` (below the filesystem root) that is not a directory."""
    for part in reversed(path.parents[:-1]):
        if part.exists() and not part.is_dir():
            return part
    return None


def _nearest_existing(path: Path) -> Path:
    for candidate in (path, *path.parents):
        if candidate.exists():
            return candidate
    return Path(path.anchor)


def _check(path: Path, *, folder: bool) -> None:
    blocker = _first_blocker(path)
    if blocker is not None:
        raise StateError(f"{blocker} is not a directory, but oac keeps {path} there")
    if folder and path.exists() and not path.is_dir():
        raise StateError(f"{path} is not a directory (oac keeps its state there)")
    if not folder and path.is_dir():
        raise StateError(f"{path} is a directory, but oac needs a file there")
    if not folder and path.is_file() and not os.access(path, os.W_OK):
        raise StateError(f"cannot write {path}: read-only")
    existing = _nearest_existing(path if folder else path.parent)
    if not os.access(existing, os.W_OK | os.X_OK):
        raise StateError(f"cannot write {existing}: read-only (oac keeps {path} there)")


def check_state_paths(options: "TestOptions") -> None:
    """Raise StateError for the first state path a run could not use. Creates nothing."""
    state = options.state_dir
    # (the caches, render-memo/ and key-cache/, are not checked: one that cannot be used only costs time)
    for folder in (state, state / "build", options.build_dir):
        _check(folder, folder=True)
    files = [options.state_db, Path(f"{options.state_db}-wal"), Path(f"{options.state_db}-shm"),
             options.results_path]
    if options.junit_path is not None:
        files.append(options.junit_path)
    for file in files:
        _check(file, folder=False)
    _refuse_links(options)


def _refuse_links(options: "TestOptions") -> None:
    """No symlink, device or other non-file where the run writes under `.oac/` (nor at the user's result paths)."""
    root = options.root
    build = fsio.parts_under(options.build_dir, root)
    dirs = [".oac"] + [f".oac/{name}" for name in ("build", "render-memo", "key-cache")]
    dirs += ["/".join(build[:n]) for n in range(3, len(build) + 1)]
    caches = {".oac/render-memo", ".oac/key-cache"}  # a plain file there only makes the cache unusable
    for rel in dirs:
        entry = fsio.inspect(root, rel, read=False, show=rel)
        if entry.kind not in ("absent", "directory") and not (rel in caches and entry.kind == "file"):
            raise StateError(f"refusing to write {root / rel}: it is a {entry.kind}, not a directory (oac never "
                             "writes through symbolic links)")
    files = [options.state_db.with_name(options.state_db.name + suffix) for suffix in ("", "-wal", "-shm")]
    files += [options.results_path] + ([options.junit_path] if options.junit_path is not None else [])
    for path in files:
        try:
            fsio.check_writable_file(fsio.trusted_root(path), str(path), show=str(path))
        except fsio.OacError as exc:
            raise StateError(f"cannot use {path}: {exc}") from None
