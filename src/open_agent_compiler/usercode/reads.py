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

Entries are `read:<absolute path>`, `dir:<absolute path>`, `link:<absolute path>` (a symbolic link read through:
keyed on where it points and what is there) and `stat:<absolute path>` (an existence or kind check: keyed on
whether it exists, its kind and its permission bits).

Attribution by code, not by clock: each read is also credited to the project module whose code made it (the first
frame on the stack whose file is a project module), in `credited`, for the life of the process. A test's key
covers what every module its run reaches read, whenever that happened (a cache filled by an earlier test, a global
set at import): see `project_imports.files_of`. A read made while a test runs, through code that can keep nothing,
is instead held for that test alone (`private_reads`; credited after all if a module turns out to keep it).

Content as read: the first time a file is read in a process its size and mtime are noted (`seen_at_read`); a
file whose signature differs when its test is recorded was changed while the test ran (`changed_since_read`).
"""

import os
import stat as stat_module
import sys
import threading
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

from open_agent_compiler.fsio import in_own_open
from open_agent_compiler.usercode import private_reads

READ = "read:"
DIR = "dir:"
_VENDORED = ("site-packages", "dist-packages", "__pycache__")

_active: list[set[str]] = []
_installed = False
_root: str | None = None
_excluded: tuple[str, ...] = ()
_verdicts: dict[str, str | None] = {}
LINK = "link:"
STAT = "stat:"
credited: dict[str, set[str]] = {}  # module name → entries its code read (any time in this process)
_code_files: dict[str, bool] = {}  # a frame's file → whether it is project code
seen_at_read: dict[str, tuple[int, int] | None] = {}  # file → (size, mtime) when user code first read it
_busy = threading.local()
_IMPORT_SOURCES = (".py", ".pyc")


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
    _code_files.clear()
    credited.clear()
    seen_at_read.clear()


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


def _from_import_system(path: str, listing: bool) -> bool:
    """Finding or loading a module (importlib's own opens and listings); `pkgutil.get_data` and other data opens
    from importlib frames are user code's reads."""
    try:
        frame = sys._getframe(3)  # 0: this function, 1: _note, 2: the hook, 3: the Python code that made the call
    except ValueError:
        return False
    return frame.f_code.co_filename.startswith("<frozen importlib") and (listing or path.endswith(_IMPORT_SOURCES))


def _is_code(filename: str) -> bool:
    known = _code_files.get(filename)
    if known is None:
        known = _code_files[filename] = filename.endswith(".py") and project_path(filename) is not None
    return known


_OWN_CODE = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep  # open_agent_compiler/


def crediting_module(depth: int = 2, *, direct: bool = False) -> str | None:
    """The module of the first project frame on the caller's stack (None: no project code is running). `direct`:
    None as well when oac's own code or the import system stands between (their checks are not user code's)."""
    try:
        frame = sys._getframe(depth)
    except ValueError:
        return None
    while frame is not None:
        filename = frame.f_code.co_filename
        if _is_code(filename):
            name = frame.f_globals.get("__name__")
            return name if isinstance(name, str) else None
        if direct and (filename.startswith(_OWN_CODE) or filename.startswith("<frozen importlib")):
            return None
        frame = frame.f_back
    return None


def _signature(path: str) -> tuple[int, int] | None:
    try:
        found = os.stat(path)
    except OSError:
        return None
    return found.st_size, found.st_mtime_ns


def _add(entry: str, module: str | None, held: frozenset[str] | None = None) -> None:
    """Into every open block; credited to `module`, or only held for the running test (`held`: the modules
    judged to keep nothing, see `private_reads`)."""
    for into in _active:
        into.add(entry)
    if module is None:
        return
    if held is not None:
        private_reads.hold(entry, module, held)
    else:
        credited.setdefault(module, set()).add(entry)


def _attribution(depth: int, direct: bool = False) -> tuple[str | None, frozenset[str] | None]:
    """(the module credited, the modules judged when the read is held for the running test alone)."""
    try:
        frame = sys._getframe(depth)
    except ValueError:
        return None, None
    return private_reads.judge(frame, _is_code, _OWN_CODE, direct)


def _hook(event: str, args: tuple) -> None:
    if not _active:
        return
    if event == "open":
        if in_own_open():  # oac's own file I/O (fsio) or thread, while user code runs in another: not user code's
            return
        path, mode, flags = args
        if isinstance(mode, str):
            if ("w" in mode or "a" in mode or "x" in mode) and "+" not in mode:
                return
        elif isinstance(flags, int) and flags & os.O_ACCMODE == os.O_WRONLY:
            return
        prefix = READ
    elif event == "os.listdir" or event == "os.scandir":
        if in_own_open():
            return
        path = args[0] if args else "."
        prefix = DIR
    else:
        return
    if path is None:
        path = "."
    if getattr(_busy, "on", False):
        return
    if isinstance(path, int):  # os.scandir(fd), os.fwalk: the folder the descriptor is open on
        if prefix != DIR or (path := _fd_path(path)) is None:
            return
    _busy.on = True  # the checks below stat and resolve paths: not user code's reads
    try:
        _note(prefix, path)
    finally:
        _busy.on = False


def _absolute(path: object) -> str | None:
    try:
        text = os.fsdecode(path)  # type: ignore[arg-type]
        return os.path.normpath(text if os.path.isabs(text) else os.path.join(os.getcwd(), text))
    except (TypeError, ValueError, OSError):
        return None


def _note(prefix: str, path: object, from_hook: bool = True) -> None:
    given = _absolute(path)
    if given is None or (from_hook and _from_import_system(given, prefix == DIR)):
        return
    found = project_path(given)
    linked = given != found and os.path.islink(given) and _inside(given)
    if found is None and not linked:
        return
    if prefix == READ and found is not None and os.path.isdir(found):
        return
    module, held = _attribution(3)
    if linked:
        _add(LINK + given, module, held)
    if found is not None:
        if prefix == READ and found not in seen_at_read:
            seen_at_read[found] = _signature(found)
        _add(prefix + found, module, held)


def _inside(given: str) -> bool:
    """`given` (not resolved) names a place in the project, outside state and environments."""
    return _root is not None and given.startswith(_root + os.sep) and not (given + os.sep).startswith(_excluded)


def note_stat(path: object) -> None:
    """An existence / kind check by project code (`os.stat`, `os.path.exists`, ...: no audit event)."""
    if not _active or isinstance(path, int):
        return
    given = _absolute(path)
    if given is None or not _inside(given) or any(part in _VENDORED for part in given[len(_root or ""):].split(os.sep)):
        return
    module, held = _attribution(3, direct=True)
    if module is not None:  # oac's own checks (no project frame) are not user code's
        _add(STAT + given, module, held)


def stat_digest_input(path: str) -> str:
    """What a recorded existence check is keyed on: missing, or the kind and permission bits."""
    try:
        found = os.stat(path)
    except OSError:
        return "missing"
    kind = "dir" if stat_module.S_ISDIR(found.st_mode) else "file" if stat_module.S_ISREG(found.st_mode) else "other"
    return f"{kind}:{stat_module.S_IMODE(found.st_mode):o}"


def link_digest_input(path: str) -> str:
    """What a symbolic link read through is keyed on: where it points (the text of the link)."""
    try:
        return os.readlink(path)
    except OSError:
        return "\0not a link"


def changed_since_read(paths: "list[str] | set[str]") -> list[str]:
    """Of the files read, those whose size or mtime differs from when user code first read them."""
    return sorted(path for path in paths if path in seen_at_read and seen_at_read[path] != _signature(path))


def forget_read(paths: "list[str] | set[str]") -> None:
    """The test that read these is recorded: the next read notes their signature afresh."""
    for path in paths:
        seen_at_read.pop(path, None)


def _fd_path(fd: int) -> str | None:
    """The path a descriptor is open on (Linux's /proc; elsewhere unknown, and the read is not seen)."""
    try:
        return os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        return None


def _watching_open(original: Any) -> Any:
    def watched(path: Any, flags: int, *args: Any, dir_fd: int | None = None, **kwargs: Any) -> Any:
        if dir_fd is None or not _active or getattr(_busy, "on", False) or in_own_open():
            return original(path, flags, *args, dir_fd=dir_fd, **kwargs)
        folder = _fd_path(dir_fd)  # the audit event names the path relative to the folder, which it does not give
        if folder is not None and flags & os.O_ACCMODE != os.O_WRONLY and not isinstance(path, int):
            _busy.on = True
            try:
                _note(READ, os.path.join(folder, os.fsdecode(path)), from_hook=False)
            finally:
                _busy.on = False
        _busy.on = True
        try:
            return original(path, flags, *args, dir_fd=dir_fd, **kwargs)
        finally:
            _busy.on = False

    watched.__wrapped__ = original  # type: ignore[attr-defined]
    return watched


def _watching_stat(original: Any) -> Any:
    def watched(path: Any, *args: Any, **kwargs: Any) -> Any:
        if _active and not kwargs.get("dir_fd") and not getattr(_busy, "on", False):
            _busy.on = True
            try:
                note_stat(path)
            finally:
                _busy.on = False
        return original(path, *args, **kwargs)

    watched.__wrapped__ = original  # type: ignore[attr-defined]
    return watched


def install() -> None:
    global _installed
    if not _installed:
        sys.addaudithook(_hook)
        os.stat = _watching_stat(os.stat)  # no audit event for stat: os.path.exists/isfile/Path.exists call this
        os.lstat = _watching_stat(os.lstat)
        os.open = _watching_open(os.open)  # os.open(name, dir_fd=fd): the event lacks the folder
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


class _TestRecording(_Recording):
    """A test's block: reads that only the running test can see are held for it, not credited (`private_reads`);
    at its end, a module judged to keep nothing that changed gets its held reads credited after all."""

    __slots__ = ()

    def __enter__(self) -> set[str]:
        into = super().__enter__()
        private_reads.begin()
        return into

    def __exit__(self, *_: object) -> None:
        try:
            for entry, modules in private_reads.end():
                for module in modules:
                    credited.setdefault(module, set()).add(entry)
        finally:
            super().__exit__()


def recording(one_test: bool = False) -> AbstractContextManager[set[str]]:
    """`read:` / `dir:` entries for what the code in the block (any thread of this process) reads. `one_test`:
    the block runs one test, whose own reads may be held for it alone (`private_reads`)."""
    return _TestRecording() if one_test else _Recording()


def listing_digest_input(path: str) -> bytes:
    """What a recorded folder listing is keyed on: its sorted names (b"" when it is gone)."""
    try:
        names = sorted(os.listdir(path))
    except OSError:
        return b"\0missing"
    return "\n".join(names).encode("utf-8", "surrogateescape")
