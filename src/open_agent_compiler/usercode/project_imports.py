"""What a test loads from the project: a `sys.meta_path` finder for the project's own modules.

For a module whose file lies under the project root (and not in a virtualenv or site-packages) it
- loads it from SOURCE only: the loader reports no source stats, so importlib never trusts a `.pyc` (a same-second,
  same-size edit would otherwise run stale bytecode) and writes none;
- records the file, and the project modules that module imported while it ran (its import edges), so a module
  imported earlier — at registry load, by an earlier test — still yields its transitive project dependencies.

`tracking()` records every module imported (freshly or from `sys.modules`) during a block; `files_of()` turns
module names into the project files they run, edges followed. Used like a compiler's depfile: the files a test
loaded are saved with its green state and folded into its key next run.
"""

import builtins
import importlib.machinery
import os
import importlib.util
import sys
from collections.abc import Iterable
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

from open_agent_compiler.usercode import private_reads, reads

_VENDORED = ("site-packages", "dist-packages")
LINK_MARK = "@"  # a discovered path ending so is a symbolic link read through (keyed on where it points)
STAT_MARK = "?"  # ... an existence / kind check (keyed on whether it exists, its kind and mode)
CHANGED_MARK = "!"  # ... a file changed between the test's read and its record: no green
# what a recorded entry's kind (`read:`, `dir:`, ... of `reads`) becomes in a list of discovered paths
_ENTRY_MARKS = {reads.READ[:-1]: "", reads.DIR[:-1]: "/", reads.LINK[:-1]: LINK_MARK, reads.STAT[:-1]: STAT_MARK}

_root: Path | None = None
_files: dict[str, str] = {}  # module name → absolute source file (project modules loaded through the finder)
_edges: dict[str, set[str]] = {}  # module name → module names it imported while executing
_module_reads: dict[str, set[str]] = {}  # module name → `read:`/`dir:` entries of what it read while executing
_mtimes: dict[str, int | None] = {}  # module name → its source's mtime when it ran
_load_reads: set[str] = set()  # what user code read while `loader` loaded or called it (factories, etc.)
_recorders: list[set[str]] = []
_original_import = builtins.__import__
_original_import_module = importlib.import_module
_noted_files: list[set[str]] = []
_verdicts: dict[str, bool] = {}
private_reads.set_edges(_edges.get)  # a module's state judged with the project modules it imported


def _is_project_file(path: str) -> bool:
    """Under the project root, a `.py` file, and not part of an installed environment (venv, site-packages)."""
    known = _verdicts.get(path)
    if known is None:
        known = _verdicts[path] = _judge(path)
    return known


def _judge(path: str) -> bool:
    if _root is None or not path.endswith(".py"):
        return False
    resolved = Path(path).resolve()
    if not resolved.is_relative_to(_root):
        return False
    if any(part in _VENDORED for part in resolved.relative_to(_root).parts):
        return False
    prefix = Path(sys.prefix).resolve()
    return prefix == _root or not resolved.is_relative_to(prefix)


class SourceOnlyLoader(importlib.machinery.SourceFileLoader):
    """Compiles from source every time: without source stats importlib skips (and does not write) bytecode."""

    def path_stats(self, path: str) -> dict[str, Any]:
        raise OSError("oac: project modules always run from source")

    def exec_module(self, module: Any) -> None:
        for recorder in _recorders:  # loaded by path (a handler script) or by importlib: still loaded
            recorder.add(module.__name__)
        try:
            _mtimes[module.__name__] = os.stat(self.path).st_mtime_ns
        except OSError:
            _mtimes[module.__name__] = None
        importer = reads.crediting_module(1)  # the project code that caused this import (any way it was asked)
        if importer is not None and importer != module.__name__:
            _edges.setdefault(importer, set()).add(module.__name__)
        imported: set[str] = set()
        with _recording(imported), reads.recording() as read:
            super().exec_module(module)
        _edges.setdefault(module.__name__, set()).update(imported)
        if read:
            _module_reads[module.__name__] = read


class ProjectFinder:
    """Finds project modules with the normal path search, then loads them with `SourceOnlyLoader`."""

    @classmethod
    def find_spec(cls, name: str, path: Any = None, target: Any = None) -> Any:
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        if spec is None or not spec.has_location or not spec.origin or not _is_project_file(spec.origin):
            return spec
        loader = SourceOnlyLoader(name, spec.origin)
        located = importlib.util.spec_from_file_location(name, spec.origin, loader=loader,
                                                         submodule_search_locations=spec.submodule_search_locations)
        _files[name] = str(Path(spec.origin).resolve())
        return located

    @classmethod
    def invalidate_caches(cls) -> None:
        pass


def install(root: Path) -> None:
    """Route imports of modules under `root` through `ProjectFinder` (idempotent; a new root replaces the old)."""
    global _root
    resolved = root.resolve()
    if _root != resolved:
        _root = resolved
        for name in _files:  # another project's modules: never imported by this one's code
            sys.modules.pop(name, None)
        _files.clear()
        _edges.clear()
        _module_reads.clear()
        _load_reads.clear()
        _mtimes.clear()
        _verdicts.clear()
    reads.set_root(resolved)
    reads.install()
    importlib.import_module = _recording_import_module
    if ProjectFinder not in sys.meta_path:
        sys.meta_path.insert(0, ProjectFinder)


def drop_stale() -> None:
    """If the source of any project module that ran in this process changed since, forget every one of them
    (the next import runs them all again): a module must never keep an edited helper's old objects."""
    stale = False
    for name, mtime in list(_mtimes.items()):
        path = _files.get(name)
        try:
            now = os.stat(path).st_mtime_ns if path else None
        except OSError:
            now = None
        if now != mtime:
            stale = True
            break
    if stale:
        for name in list(_mtimes):
            sys.modules.pop(name, None)
            _edges.pop(name, None)
            _module_reads.pop(name, None)
        _mtimes.clear()


def source_loader(name: str, path: str) -> SourceOnlyLoader:
    """A loader for a script loaded by path (a handler): from source, its imports recorded as its edges."""
    _files[name] = str(Path(path).resolve())
    return SourceOnlyLoader(name, path)


def _recording_import(name: str, globals: Any = None, locals: Any = None, fromlist: Any = (), level: int = 0) -> Any:
    module = _original_import(name, globals, locals, fromlist, level)
    absolute = name
    if level:
        package = (globals or {}).get("__package__") or ""
        try:
            absolute = importlib.util.resolve_name("." * level + name, package)
        except (ImportError, ValueError):
            absolute = name
    found = {absolute} if absolute else set()
    for item in fromlist or ():
        if isinstance(item, str):
            found.add(f"{absolute}.{item}" if absolute else item)
    for recorder in _recorders:
        recorder.update(found)
    importer = (globals or {}).get("__name__")
    if isinstance(importer, str) and importer in _files:  # credited to the code that imports, not to the clock
        _edges.setdefault(importer, set()).update(found)
    return module


def _recording_import_module(name: str, package: str | None = None) -> Any:
    """`importlib.import_module`, which bypasses `__import__` and fires no event for a module already imported:
    the edge is credited to the project code that calls it."""
    module = _original_import_module(name, package)
    importer = reads.crediting_module(2)
    if importer is not None:
        _edges.setdefault(importer, set()).add(module.__name__)
    for recorder in _recorders:
        recorder.add(module.__name__)
    return module


def _forget(stack: list[set[str]], item: set[str]) -> None:
    """Remove `item` itself (not an equal set) from `stack`."""
    for index in range(len(stack) - 1, -1, -1):
        if stack[index] is item:
            del stack[index]
            return


class _Recording:
    """Module names imported in the block go into `into` (a class, not a generator: entered per test and per
    project module executed)."""

    __slots__ = ("into",)

    def __init__(self, into: set[str]) -> None:
        self.into = into

    def __enter__(self) -> set[str]:
        if not _recorders:
            builtins.__import__ = _recording_import
        _recorders.append(self.into)
        return self.into

    def __exit__(self, *_: object) -> None:
        _forget(_recorders, self.into)
        if not _recorders:
            builtins.__import__ = _original_import


_recording = _Recording


class _Tracking:
    """`tracking()`'s block: the imports and the reads recorded, then the noted files, in that order (as nested
    blocks would), undone in reverse."""

    __slots__ = ("names", "files", "imports", "reads", "read", "one_test")

    def __init__(self, one_test: bool = False) -> None:
        self.one_test = one_test

    def __enter__(self) -> set[str]:
        self.names: set[str] = set()
        self.files: set[str] = set()
        _noted_files.append(self.files)
        try:
            self.imports = _Recording(self.names)
            self.imports.__enter__()
            try:
                self.reads = reads.recording(one_test=self.one_test)
                self.read = self.reads.__enter__()
            except BaseException:
                self.imports.__exit__(None, None, None)
                raise
        except BaseException:
            _forget(_noted_files, self.files)
            raise
        return self.names

    def __exit__(self, *_: object) -> None:
        names, files = self.names, self.files
        try:
            try:
                self.reads.__exit__(None, None, None)
            finally:
                self.imports.__exit__(None, None, None)
        finally:
            _forget(_noted_files, files)
            names.update(f"file:{path}" for path in files)
            names.update(self.read)


def tracking(one_test: bool = False) -> AbstractContextManager[set[str]]:
    """Module names imported during the block, `read:`/`dir:` entries for what it read (see `reads`), plus files
    noted with `note_files` (e.g. by a handler child). `one_test`: the caller runs one test in the block, and
    reads only that test can see are held for it alone (`reads.recording`, `private_reads`)."""
    return _Tracking(one_test)


def note_files(paths: Iterable[str]) -> None:
    """Files loaded somewhere else on behalf of the current tracking blocks (a handler in its own process)."""
    for files in _noted_files:
        files.update(paths)


def files_of(names: Iterable[str]) -> list[str]:
    """The project files the given modules (and `file:`/`read:`/`dir:` entries) run or read, following recorded
    import edges. A folder whose listing was read is given with a trailing `/`."""
    found: set[str] = set()
    seen: set[str] = set()
    pending = list(names)
    while pending:
        name = pending.pop()
        if name in seen:
            continue
        seen.add(name)
        kind, colon, rest = name.partition(":")  # (a module's name has no colon: one look, not one per kind)
        if colon and kind == "file":  # a handler child's report: a module or a read, or a folder ending in "/"
            folder = name.endswith("/")
            path = reads.project_path(rest.rstrip("/")) if folder or not name.endswith(".py") else None
            if folder and path is not None:
                found.add(path + "/")
            elif path is not None or _is_project_file(rest):
                found.add(path or str(Path(rest).resolve()))
            continue
        if colon and (mark := _ENTRY_MARKS.get(kind)) is not None:
            found.add(rest + mark)
            continue
        path = _files.get(name)
        if path is None:
            module = sys.modules.get(name)
            candidate = getattr(module, "__file__", None) if module is not None else None
            if not candidate or not _is_project_file(candidate):
                continue
            path = str(Path(candidate).resolve())
        found.add(path)
        pending.extend(_edges.get(name, ()))
        pending.extend(_module_reads.get(name, ()))
        pending.extend(reads.credited.get(name, ()))  # what its code read, whenever (a cache it filled)
        parent = name.rpartition(".")[0]  # importing a.b runs a/__init__.py too
        if parent:
            pending.append(parent)
    return sorted(found)


def loaded_files() -> list[str]:
    """Every project file loaded through the finder in this process (what a handler child reports)."""
    return sorted(set(_files.values()))


def factory_reads() -> set[str]:
    """What user code read while the loader loaded or called it (the factory): every test's definition came from
    that run, and a global it filled may answer any test."""
    return set(_load_reads)


def note_load_reads(entries: Iterable[str]) -> None:
    """What user code read while the loader loaded or called it (a factory reading its prompts)."""
    _load_reads.update(entries)


def loaded_project_files() -> list[str]:
    """Every project file among the modules loaded in this process (through the finder or before it existed),
    and every project file user code read while loading (folders, whose listing was read, end in "/")."""
    found = set(_files.values())
    found.update(files_of(_load_reads))
    for reads_of_module in list(_module_reads.values()):
        found.update(files_of(reads_of_module))
    for name, module in list(sys.modules.items()):
        if name in ("__main__", "dodo"):  # the program itself (doit's dodo.py), not a project module it compiles
            continue
        path = getattr(module, "__file__", None)
        if isinstance(path, str) and _is_project_file(path):
            found.add(str(Path(path).resolve()))
    return sorted(found)
