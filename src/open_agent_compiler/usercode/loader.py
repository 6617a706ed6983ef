"""The one way the engine imports user code: every `module:attr` spec (registry factories, callable mocks, model
scripts, judge and invoker factories) and every handler script loaded by path goes through here.

What it guarantees, for every caller alike:
- project modules load from source through `project_imports` (their imports are recorded transitively) and what
  they read while loading is recorded (`reads`);
- any failure — `SystemExit` and other `BaseException`s included, Ctrl-C excepted — is one `UserCodeError`
  line naming what was loaded and the spec (the CLI exits 2; inside a test the test FAILs);
- a spec that resolves outside the project to something that is not a factory (`sys:exit`, `os:_exit`,
  `builtins:print`, anything in the standard library) is refused before it is called;
- `Loaded.files` / `Loaded.digest()`: every project file the load ran or read, for the key.
"""

import importlib
import importlib.util
import inspect
import os
import sys
import types
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import xxhash
from open_agent_compiler.errors import OacError
from open_agent_compiler.usercode import project_imports, reads


class UserCodeError(OacError):
    """User code could not be loaded or called; the message is one line naming the culprit."""


def one_line(exc: BaseException) -> str:
    """An exception as `Type: message` on one line (a SystemExit as `called sys.exit(code)`)."""
    if isinstance(exc, SystemExit):
        return f"called sys.exit({exc.code!r})"
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


Describe = Callable[[BaseException], str]


def _raised(exc: BaseException, describe: Describe) -> str:
    return one_line(exc) if isinstance(exc, SystemExit) else f"raised {describe(exc)}"


def digest_files(paths: Iterable[str], root: str | None = None) -> str:
    """One digest over project files' contents (a folder, ending in "/", by its names; a link read through,
    ending in "@", by where it points; an existence check, ending in "?", by kind and mode); a gone file is keyed
    as missing. Each path is named relative to `root` (no path of the checkout in a key)."""
    hasher = xxhash.xxh3_128()
    under = os.path.join(root, "") if root else None
    for path in sorted(paths):
        if path.endswith("/"):
            data = reads.listing_digest_input(path[:-1])
        elif path.endswith(project_imports.LINK_MARK):
            data = reads.link_digest_input(path[:-1]).encode("utf-8", "surrogateescape")
        elif path.endswith(project_imports.STAT_MARK):
            data = reads.stat_digest_input(path[:-1]).encode()
        else:
            try:
                data = Path(path).read_bytes()
            except OSError:
                data = b"\0missing"
        named = path[len(under):] if under and path.startswith(under) else path
        hasher.update(named.encode("utf-8", "surrogateescape") + b"\0" + xxhash.xxh3_128_digest(data))
    return hasher.hexdigest()


@dataclass
class Loaded:
    """What a spec named, and every project file loading it ran or read (folders end in "/")."""

    target: Any
    module: str
    files: tuple[str, ...]  # grows with what calling it (`call`) read
    root: str | None = None  # the project (resolved): files are named relative to it in the digest

    def digest(self) -> str:
        return digest_files(self.files, self.root)


def _forget_foreign(module_name: str, root: str) -> None:
    """Drop a cached module of that name loaded from another project (or from an older source of this one)."""
    if module_name.partition(".")[0] in sys.stdlib_module_names:
        return  # never re-import the standard library
    cached = sys.modules.get(module_name)
    origin = getattr(cached, "__file__", None) if cached is not None else None
    if cached is not None and (origin is None or not os.path.abspath(origin).startswith(root + os.sep)):
        if module_name.partition(".")[0] == "open_agent_compiler" or (
                origin is not None and any(part in ("site-packages", "dist-packages") for part in Path(origin).parts)):
            return  # ours, or an installed package: one per interpreter
        del sys.modules[module_name]
    elif cached is not None and origin is not None:
        loaded_at = getattr(cached, "__oac_mtime__", None)
        try:
            mtime = os.stat(origin).st_mtime_ns
        except OSError:
            mtime = None
        if loaded_at is not None and loaded_at != mtime:
            del sys.modules[module_name]


_kept_root: str | None = None  # the project folder the registry factory put on sys.path


@contextmanager
def _on_path(root: str | None, keep: bool) -> Iterator[None]:
    """The project's directory first on sys.path, so its modules win over another project's loaded earlier."""
    if root is None or (not keep and root in sys.path):
        yield
        return
    if keep:
        global _kept_root
        if _kept_root is not None and _kept_root != root and _kept_root in sys.path:
            sys.path.remove(_kept_root)  # another project's folder: its modules are not this one's
        _kept_root = root
        if sys.path[:1] != [root]:
            if root in sys.path:
                sys.path.remove(root)
            sys.path.insert(0, root)
        yield
        return
    sys.path.insert(0, root)
    try:
        yield
    finally:
        if root in sys.path:
            sys.path.remove(root)


def _outside_project(module: types.ModuleType, root: str | None) -> bool:
    origin = getattr(module, "__file__", None)
    if module.__name__.partition(".")[0] in sys.stdlib_module_names or origin is None:
        return True
    return root is None or not project_imports._is_project_file(origin)


def _split(spec: str, what: str, error: type[OacError]) -> tuple[str, str]:
    module_name, sep, attr = spec.partition(":")
    if not sep or not module_name or not attr:
        raise error(f"{what} {spec!r} must look like 'module:attribute'")
    return module_name, attr


@contextmanager
def _recording_load() -> Iterator[set[str]]:
    with reads.recording() as read:
        yield read
    project_imports.note_load_reads(read)


def load(spec: str, root: Path | None, what: str, *, expects: str = "a function of the project",
         error: type[OacError] = UserCodeError, describe: Describe = one_line, keep_on_path: bool = False) -> Loaded:
    """Import `module` of `module:attr` (the project at `root` first on sys.path while importing, or from then on
    with `keep_on_path`: the registry factory) and resolve `attr` (dotted). `what` names the kind of user code in
    messages ("judge factory"); `expects` says what a built-in is not."""
    module_name, attr = _split(spec, what, error)
    where = os.path.abspath(root) if root is not None else None
    if where is not None:
        project_imports.install(Path(where))
        project_imports.drop_stale()
        _forget_foreign(module_name, where)
    importlib.invalidate_caches()  # the module file may be newer than the import system's directory caches
    with _on_path(where, keep_on_path), _recording_load() as read:
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as exc:
            if exc.name and (module_name == exc.name or module_name.startswith(exc.name + ".")):
                raise error(f"{what} {spec!r}: no module {module_name!r} importable from {where or os.getcwd()}") \
                    from None
            raise error(f"{what} {spec!r}: importing {module_name!r} failed: {describe(exc)}") from None
        except KeyboardInterrupt:
            raise
        except Exception as exc:
            raise error(f"{what} {spec!r}: importing {module_name!r} failed: {describe(exc)}") from None
        except BaseException as exc:  # SystemExit & co. at import time: user code, never the end of `oac`
            raise error(f"{what} {spec!r}: importing {module_name!r} {_raised(exc, describe)}") from None
    origin = getattr(module, "__file__", None)
    if where is not None and origin is not None and os.path.abspath(origin).startswith(where + os.sep):
        try:
            module.__oac_mtime__ = os.stat(origin).st_mtime_ns  # type: ignore[attr-defined]
        except OSError:
            pass
    target: Any = module
    for part in attr.split("."):
        if not hasattr(target, part):
            raise error(f"{what} {spec!r}: module {module_name!r} has no attribute {attr!r}")
        target = getattr(target, part)
    if _outside_project(module, where) and (
            inspect.isbuiltin(target) or inspect.ismethoddescriptor(target)
            or module_name.partition(".")[0] in sys.stdlib_module_names):
        # `sys:exit`, `os:_exit`, `builtins:print`: not the project's code, and calling it could end the run
        raise error(f"{what} {spec!r}: {attr!r} is a built-in, not {expects}")
    return Loaded(target, module_name, tuple(project_imports.files_of([module_name, *read])),
                  os.path.realpath(where) if where is not None else None)


def call(loaded: Loaded, spec: str, what: str, *args: Any, error: type[OacError] = UserCodeError,
         describe: Describe = one_line) -> Any:
    """Call what `load` returned; any exception or exit of the user's code is one `error` line."""
    target = loaded.target
    if not callable(target):
        raise error(f"{what} {spec!r}: {spec.partition(':')[2]!r} is not callable (a {type(target).__name__})")
    with _recording_load() as read:
        try:
            made = target(*args)
        except KeyboardInterrupt:
            raise
        except OacError as exc:
            raise error(f"{what} {spec!r} failed: {exc}") from None
        except BaseException as exc:  # noqa: BLE001 - SystemExit, GeneratorExit, custom BaseException subclasses
            raise error(f"{what} {spec!r} {_raised(exc, describe)}") from None
    if read:
        loaded.files = tuple(sorted({*loaded.files, *project_imports.files_of(read)}))
    return made


def load_factory(spec: str, root: Path | None, what: str, accepts: Callable[[Any], bool], lacks: str,
                 error: type[OacError] = UserCodeError) -> tuple[Any, Loaded]:
    """(what the zero-argument factory `spec` returns, its load) — refused unless `accepts` it."""
    loaded = load(spec, root, what, expects=f"a {what} of the project", error=error)
    made = call(loaded, spec, what, error=error)
    if not accepts(made):
        raise error(f"{what} {spec!r} returned a {type(made).__name__}, which has {lacks}")
    return made, loaded


def load_path(name: str, path: str) -> types.ModuleType:
    """Run a script by path as module `name` (a handler), from source, its imports and reads recorded."""
    spec = importlib.util.spec_from_file_location(name, path, loader=project_imports.source_loader(name, path))
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def exec_source(name: str, source: str, label: str) -> types.ModuleType:
    """Run handler source given inline (no file) as module `name`."""
    module = types.ModuleType(name)
    module.__file__ = label
    sys.modules[name] = module
    exec(compile(source, label, "exec"), module.__dict__)  # noqa: S102 - the user's handler
    return module


def module_origin(module_name: str, root: Path | None) -> str | None:
    """The file `module_name` would load from, found by the import system (which may import its parent
    packages, e.g. a meta-path finder for editable installs: user code, so here); None if not found."""
    with _on_path(os.path.abspath(root) if root is not None else None, False), _recording_load():
        try:
            spec = importlib.util.find_spec(module_name)
        except KeyboardInterrupt:
            raise
        except BaseException:  # noqa: BLE001 - a parent package that fails or exits: not found, no crash
            return None
    return spec.origin if spec is not None and spec.origin and spec.has_location else None


def module_exists(module_name: str, root: Path) -> bool:
    """Whether `module_name` is a module file of the project at `root` (without importing it)."""
    return (root / (module_name.replace(".", "/") + ".py")).is_file() or \
        (root / module_name.replace(".", "/") / "__init__.py").is_file()


__all__ = ["Loaded", "UserCodeError", "call", "digest_files", "exec_source", "load", "load_factory", "load_path",
           "module_exists", "module_origin", "one_line"]
