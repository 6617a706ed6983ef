"""Which of a test's reads are that test's alone: the finer half of attribution by code.

By default a read is credited to the project module whose code made it, for the life of the process, because a
module can keep what it read (a cache, a global) and answer a later test from it. A read made while a test runs is
instead held for that test only when nothing on the way can keep it:
- between the read and the first project frame stand only file-reading parts of the standard library (`open`,
  `pathlib`, `os`, `glob`, ...: no cache of content by path);
- every project frame on the stack runs a plain module-level function of its module (found under its own name
  there; no generator or coroutine, whose frame lives on), called by project code or by oac, never by a library
  (a caching decorator, a callback, a thread);
- each of those modules — and every project module it refers to or imported — holds nothing: its globals are
  modules, functions, imported classes and immutable values; no class of its own, no mutable default or closure,
  and no function of it stores into a global, an attribute or an item, or calls a mutating method by name.
After the test, every module judged so is looked at again; one whose globals, defaults, closures or function
attributes changed (or that now refers to a project module that keeps something) was keeping something after all,
and the held reads are credited as before. When unsure, the read is the module's.

The cost of the default is precision: one helper module that reads a fixture per call (`fixtures/<name>.json`)
would key every test reaching it on every fixture any test read; held reads key each test on its own.
"""

import __future__
import dis
import inspect
import re
import sys
import types
from pathlib import PurePath
from typing import Any, Callable

_IO_MODULES = frozenset({
    "builtins", "io", "_pyio", "codecs", "os", "posixpath", "genericpath", "pathlib", "glob", "fnmatch",
    "pkgutil", "importlib._bootstrap_external", "importlib.resources._common", "importlib.resources.readers",
    "importlib.readers", "importlib.resources.abc", "importlib.abc", "encodings", "json",
})
_IMMUTABLE = (type(None), bool, int, float, complex, str, bytes, range, type(Ellipsis), re.Pattern, PurePath,
              types.GenericAlias, types.UnionType, __future__._Feature)
_LOADER_DUNDERS = frozenset({"__name__", "__doc__", "__file__", "__loader__", "__spec__", "__package__",
                             "__cached__", "__builtins__", "__annotations__", "__path__", "__all__"})
_STORES = frozenset(dis.opmap[name] for name in ("STORE_GLOBAL", "DELETE_GLOBAL", "STORE_ATTR", "DELETE_ATTR",
                                                 "STORE_SUBSCR", "DELETE_SUBSCR"))
_CELL_STORES = frozenset((dis.opmap["STORE_DEREF"], dis.opmap["DELETE_DEREF"]))
# names whose call (or use) may change state outside the call: reflection, and the mutating methods of the
# built-in containers and of the process (environ, cwd, random); a local list's append is refused too (unsure)
_MUTATING_NAMES = frozenset({
    "setattr", "delattr", "globals", "vars", "exec", "eval", "__setitem__", "__delitem__", "__setattr__",
    "append", "extend", "insert", "update", "setdefault", "pop", "popitem", "clear", "remove", "discard", "add",
    "environ", "putenv", "unsetenv", "chdir", "seed", "register", "cache", "lru_cache", "cached_property",
    "setitem", "delitem", "iadd", "iand", "iconcat", "ifloordiv", "ilshift", "imatmul", "imod", "imul", "ior",
    "ipow", "irshift", "isub", "itruediv", "ixor", "__iadd__", "__iand__", "__ior__", "__isub__", "__ixor__",
})
_BINARY_OP = dis.opmap["BINARY_OP"]
_IN_PLACE = frozenset(i for i, (name, _) in enumerate(dis._nb_ops) if name.startswith("NB_INPLACE"))  # `x |= y`

_depth = 0  # private blocks open (a test's run)
_fingerprints: dict[str, tuple[Any, ...] | None] = {}  # this block: module → its state's shape when judged (None: holds)
_held: list[tuple[str, str, frozenset[str]]] = []  # this block: (entry, reading module, modules judged for it)
_code_verdicts: dict[types.CodeType, bool] = {}
_kinds: dict[str, str] = {}  # a frame's file → "project" / "oac" / "" (a library)
_edges: Callable[[str], Any] = lambda name: ()
_is_code: Callable[[str], bool] = lambda filename: False  # reads' test of a frame's file (set on each judge)


def set_edges(edges: Callable[[str], Any]) -> None:
    """Where a module's import edges are found (`project_imports`: what it imported while it ran or was called)."""
    global _edges
    _edges = edges


def begin() -> None:
    global _depth
    if _depth == 0:
        _fingerprints.clear()
        _held.clear()
    _depth += 1


def end() -> list[tuple[str, set[str]]]:
    """Closes a private block: the held reads to credit after all, each with the modules to credit it to."""
    global _depth
    _depth -= 1
    if _depth > 0:
        return []
    changed = {name for name, shape in list(_fingerprints.items()) if shape is not None and _changed(shape, _shape(name))}
    credit = [(entry, {module, *(changed & judged)}) for entry, module, judged in _held if judged & changed]
    _fingerprints.clear()
    _held.clear()
    return credit


def _changed(before: tuple[Any, ...], now: tuple[Any, ...] | None) -> bool:
    """A global rebound, a function given state, or a project module now referred to (a lazy import) that
    holds something."""
    if now is None or now[1] != before[1]:
        return True
    return not _judge_module_set(now[0] - before[0])


def _judge_module_set(names: "frozenset[str] | set[str]") -> bool:
    judged: set[str] = set()
    return all(_judge_module(name, judged) for name in names)


def hold(entry: str, module: str, judged: frozenset[str]) -> None:
    _held.append((entry, module, judged))


def judge(frame: types.FrameType | None, is_code: Callable[[str], bool], own_code: str,
          direct: bool) -> tuple[str | None, frozenset[str] | None]:
    """(the crediting module — the first project frame's —, the modules judged when the read is the test's
    alone, else None). `direct`: no module when oac or the import system stands before the first project frame.
    The whole stack is walked: project code anywhere on it (below oac's too) could keep what was read."""
    global _is_code
    _is_code = is_code
    module: str | None = None
    judged: set[str] | None = set() if _depth else None
    called_by_oac = False  # the test's code was called by oac (the engine), not by a thread or a library
    callee_is_project = False
    while frame is not None:
        filename = frame.f_code.co_filename
        kind = _kinds.get(filename)
        if kind is None:
            kind = _kinds[filename] = "project" if is_code(filename) else "oac" if filename.startswith(own_code) \
                else ""
        if kind == "project":
            name = frame.f_globals.get("__name__")
            if not isinstance(name, str):
                return None, None
            if module is None:
                module = name
            if judged is None or not (_plain_function(frame, name) and _judge_module(name, judged)):
                return module, None
            callee_is_project = True
        elif module is None:
            if direct and (kind == "oac" or filename.startswith("<frozen importlib")):
                return None, None
            if kind == "oac" or not _reads_files_only(frame):
                judged = None
        elif kind == "" and callee_is_project:  # a library calling project code: a decorator, a callback, a thread
            return module, None
        else:
            called_by_oac = called_by_oac or kind == "oac"
            callee_is_project = False
        frame = frame.f_back
    return module, (frozenset(judged) if judged is not None and called_by_oac else None)


def _reads_files_only(frame: types.FrameType) -> bool:
    name = frame.f_globals.get("__name__")
    return isinstance(name, str) and (name in _IO_MODULES or name.startswith("encodings."))


_SUSPENDABLE = inspect.CO_GENERATOR | inspect.CO_COROUTINE | inspect.CO_ASYNC_GENERATOR | inspect.CO_ITERABLE_COROUTINE


def _plain_function(frame: types.FrameType, module: str) -> bool:
    """The frame runs a function found under its own name among its module's globals (not a method, a lambda,
    a closure made at call time or a wrapper), and not a generator or coroutine (whose frame outlives the call)."""
    code = frame.f_code
    found = frame.f_globals.get(code.co_name)
    return isinstance(found, types.FunctionType) and found.__code__ is code and found.__module__ == module \
        and not code.co_flags & _SUSPENDABLE


def _judge_module(name: str, judged: set[str]) -> bool:
    """Whether `name` and the project modules it refers to hold nothing; their shapes are kept for `end`."""
    pending = [name]
    while pending:
        current = pending.pop()
        if current in judged:
            continue
        shape = _fingerprints[current] if current in _fingerprints else _fingerprints.setdefault(current,
                                                                                                 _shape(current))
        if shape is None:
            return False
        judged.add(current)
        pending.extend(shape[0])
    return True


def _shape(name: str) -> tuple[Any, ...] | None:
    """(project modules it refers to, what changes when a global is rebound or a function of it gains state), or
    None when the module holds (or may hold) something."""
    module = sys.modules.get(name)
    if module is None:
        return None
    refers = {edge for edge in _edges(name) or () if _is_project_name(edge)}  # (edges name every module imported)
    parts: list[Any] = []
    for key, value in list(vars(module).items()):
        if key in _LOADER_DUNDERS:
            continue
        if isinstance(value, _IMMUTABLE):
            parts.append((key, id(value)))
            continue
        if isinstance(value, tuple | frozenset):
            if not _immutable(value):
                return None
            parts.append((key, id(value)))
            continue
        if isinstance(value, types.ModuleType):
            if _is_project_module(value):
                refers.add(value.__name__)
            parts.append((key, id(value)))
            continue
        owner = getattr(value, "__module__", None)
        if isinstance(value, types.FunctionType):
            if owner == name:
                function = _function_shape(value)
                if function is None:
                    return None
                parts.append((key, id(value), function))
                continue
        elif isinstance(value, types.BuiltinFunctionType):
            if value.__self__ is not None and not isinstance(value.__self__, types.ModuleType):
                return None  # a bound method of some object (a list's append)
        elif isinstance(value, type):
            if owner == name:
                return None  # a class of its own: class attributes are state
        elif type(value).__module__ != "typing":
            return None  # an instance (a dict, a logger, a session): state
        if isinstance(owner, str) and owner != name and _is_project_name(owner):
            refers.add(owner)
        parts.append((key, id(value)))
    return (frozenset(refers), tuple(parts))


def _function_shape(function: types.FunctionType) -> tuple[Any, ...] | None:
    if function.__dict__ or not _code_ok(function.__code__, bool(function.__code__.co_freevars)):
        return None
    defaults = function.__defaults__ or ()
    kwdefaults = tuple((function.__kwdefaults__ or {}).values())
    cells = tuple(cell.cell_contents for cell in function.__closure__ or () if _filled(cell))
    if not _immutable(defaults + kwdefaults) or not all(_immutable((c,)) or isinstance(c, types.ModuleType)
                                                        for c in cells):
        return None
    return (id(function.__defaults__), id(function.__kwdefaults__), tuple(id(c) for c in cells))


def _filled(cell: types.CellType) -> bool:
    try:
        cell.cell_contents
    except ValueError:
        return False
    return True


def _immutable(values: tuple[Any, ...] | frozenset[Any]) -> bool:
    for value in values:
        if isinstance(value, tuple | frozenset):
            if not _immutable(value):
                return False
        elif not isinstance(value, _IMMUTABLE):
            return False
    return True


def _code_ok(code: types.CodeType, closure: bool) -> bool:
    """No store into a global, an attribute, an item (or, in a closure, a free variable), no in-place operator (a
    dict's `|=` changes it where it lives), and no mutating name."""
    known = _code_verdicts.get(code)
    if known is None:
        known = not _MUTATING_NAMES.intersection(code.co_names) \
            and not any(op in _STORES or (closure and op in _CELL_STORES) or (op == _BINARY_OP and arg in _IN_PLACE)
                        for op, arg in _instructions(code)) \
            and all(_code_ok(const, closure) for const in code.co_consts if isinstance(const, types.CodeType))
        _code_verdicts[code] = known
    return known


def _instructions(code: types.CodeType) -> list[tuple[int, int]]:
    raw = code.co_code
    return [(raw[i], raw[i + 1]) for i in range(0, len(raw), 2)]


def _is_project_module(module: types.ModuleType) -> bool:
    filename = getattr(module, "__file__", None)
    return isinstance(filename, str) and _is_code(filename)


def _is_project_name(name: str) -> bool:
    module = sys.modules.get(name)
    return module is not None and _is_project_module(module)
