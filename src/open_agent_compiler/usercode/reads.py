"""The read tracker: which project files and folders user code reads, seen through Python's audit hooks.

One hook per process, installed the first time a block records (the engine when it loads a factory, a handler
child when it runs a handler; a forked child inherits its parent's). While no block records, the hook returns at
once. It records
- `open` of a path for reading (`open`, `io.open`, `pathlib`, `os.open` without write-only flags) → the file;
- `os.listdir` / `os.scandir` (so `glob.glob`, `Path.iterdir`, `os.walk` too) → the folder's list of names;
inside the project root only, and never under `.oac/`, a virtualenv, site-packages or the interpreter's own
prefix. Opens oac makes itself through `fsio` (the results log, state files, the build; in any thread) are not
user code's reads and are never recorded. The import system's own opens and listings (finding and loading
modules) are imports, which `project_imports` records, so they are skipped here. Not seen: what C code reads
with its own I/O, and what a subprocess reads — those must be declared (`inputs=` on a tool or test).

Entries are `read:<absolute path>` and `dir:<absolute path>`.
"""

import os
import sys
from contextlib import AbstractContextManager
from pathlib import Path

from open_agent_compiler.fsio import in_own_open

READ = "read:"
DIR = "dir:"
_VENDORED = ("site-packages", "dist-packages", "__pycache__")

_active: list[set[str]] = []
_installed = False
_root: str | None = None
_excluded: tuple[str, ...] = ()
_verdicts: dict[str, str | None] = {}


def set_root(root: Path) -> None:
    """The project whose files count as reads (a new root forgets what was judged for the old one)."""
    global _root, _excluded
    resolved = str(root.resolve())
    if resolved == _root:
        return
    _root = resolved
    prefixes = {os.path.realpath(p) for p in (sys.prefix, sys.base_prefix, sys.exec_prefix)}
    _excluded = tuple(p + os.sep for p in sorted(prefixes) if p != resolved) + (os.path.join(resolved, ".oac") + os.sep,)
    _verdicts.clear()


def project_path(path: str) -> str | None:
    """`path` (absolute) resolved, if it is a project input: under the root, outside state and environments."""
    known = _verdicts.get(path, "")
    if known != "":
        return known
    found: str | None = None
    if _root is not None:
        real = os.path.realpath(path)
        if (real == _root or real.startswith(_root + os.sep)) and not (real + os.sep).startswith(_excluded) \
                and not any(part in _VENDORED for part in real[len(_root):].split(os.sep)):
            found = real
    _verdicts[path] = found
    return found


def _from_import_system() -> bool:
    try:
        frame = sys._getframe(2)  # 0: this function, 1: the hook, 2: the Python code that made the call
    except ValueError:
        return False
    return frame.f_code.co_filename.startswith("<frozen importlib")


def _hook(event: str, args: tuple) -> None:
    if not _active:
        return
    if event == "open":
        if in_own_open():  # oac's own file I/O (fsio), maybe in another thread while a test runs: not user code's
            return
        path, mode, flags = args
        if isinstance(mode, str):
            if ("w" in mode or "a" in mode or "x" in mode) and "+" not in mode:
                return
        elif isinstance(flags, int) and flags & os.O_ACCMODE == os.O_WRONLY:
            return
        prefix = READ
    elif event == "os.listdir" or event == "os.scandir":
        path = args[0] if args else "."
        prefix = DIR
    else:
        return
    if path is None:
        path = "."
    if isinstance(path, int) or _from_import_system():
        return
    try:
        text = os.fsdecode(path)
        full = text if os.path.isabs(text) else os.path.join(os.getcwd(), text)
    except (TypeError, ValueError, OSError):
        return
    found = project_path(os.path.normpath(full))
    if found is None or (prefix == READ and os.path.isdir(found)):
        return
    for into in _active:
        into.add(prefix + found)


def install() -> None:
    global _installed
    if not _installed:
        sys.addaudithook(_hook)
        _installed = True


class _Recording:
    """`recording()`'s block (a class, not a generator: every test enters one, ~1.5 µs less each)."""

    __slots__ = ("into",)

    def __enter__(self) -> set[str]:
        install()
        self.into: set[str] = set()
        _active.append(self.into)
        return self.into

    def __exit__(self, *_: object) -> None:
        into = self.into
        for index in range(len(_active) - 1, -1, -1):
            if _active[index] is into:
                del _active[index]
                break


def recording() -> AbstractContextManager[set[str]]:
    """`read:` / `dir:` entries for what the code in the block (any thread of this process) reads."""
    return _Recording()


def listing_digest_input(path: str) -> bytes:
    """What a recorded folder listing is keyed on: its sorted names (b"" when it is gone)."""
    try:
        names = sorted(os.listdir(path))
    except OSError:
        return b"\0missing"
    return "\n".join(names).encode("utf-8", "surrogateescape")
