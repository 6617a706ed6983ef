"""Load a registry from a `module:callable` factory spec, with the current directory importable."""

import importlib
import inspect
import os
import sys
from collections.abc import Callable

from pydantic import ValidationError

from open_agent_compiler.errors import FactoryError, OacError
from open_agent_compiler.model.registry import AgentRegistry
from open_agent_compiler.model.validation_errors import describe_validation_error


def _one_line(exc: BaseException) -> str:
    if isinstance(exc, ValidationError):  # a definition with a bad or misspelled field
        return describe_validation_error(exc)
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _user_code_error(exc: BaseException) -> str:
    """What a BaseException from user code means, in one line (KeyboardInterrupt is re-raised before this)."""
    if isinstance(exc, SystemExit):
        return f"called sys.exit({exc.code!r})"
    return f"raised {_one_line(exc)}"


def _forget_foreign(module_name: str, root: str) -> None:
    """Drop a cached module of that name loaded from another project, so each project gets its own."""
    if module_name.partition(".")[0] in sys.stdlib_module_names:
        return  # never re-import the standard library (`sys:exit`, `os:_exit` are refused below)
    cached = sys.modules.get(module_name)
    origin = getattr(cached, "__file__", None) if cached is not None else None
    if cached is not None and (origin is None or not os.path.abspath(origin).startswith(root + os.sep)):
        del sys.modules[module_name]
    elif cached is not None and origin is not None:
        loaded_at = getattr(cached, "__oac_mtime__", None)
        try:
            mtime = os.stat(origin).st_mtime_ns
        except OSError:
            mtime = None
        if loaded_at is not None and loaded_at != mtime:
            del sys.modules[module_name]


def load_registry(spec: str, search_path: str | None = None) -> AgentRegistry:
    """Import `module` from `search_path` (default: the current directory) and call `callable()`.

    Every failure is a FactoryError whose one-line message names the spec.
    """
    module_name, sep, attr = spec.partition(":")
    if not sep or not module_name or not attr:
        raise FactoryError(f"factory {spec!r} must look like 'module:callable' (e.g. 'agents:registry')")
    root = os.path.abspath(search_path or os.getcwd())
    # The project's directory goes first, so its `agents` module wins over another project's loaded earlier.
    if sys.path[:1] != [root]:
        if root in sys.path:
            sys.path.remove(root)
        sys.path.insert(0, root)
    _forget_foreign(module_name, root)
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name and module_name.startswith(exc.name):
            raise FactoryError(f"factory {spec!r}: no module {module_name!r} importable from {root}") from None
        raise FactoryError(f"factory {spec!r}: importing {module_name!r} failed: {_one_line(exc)}") from None
    except KeyboardInterrupt:
        raise
    except Exception as exc:
        raise FactoryError(f"factory {spec!r}: importing {module_name!r} failed: {_one_line(exc)}") from None
    except BaseException as exc:  # SystemExit & co. at import time: user code, never the end of `oac`
        raise FactoryError(f"factory {spec!r}: importing {module_name!r} {_user_code_error(exc)}") from None
    origin = getattr(module, "__file__", None)
    if origin is not None and os.path.abspath(origin).startswith(root + os.sep):  # mark only project modules
        try:
            module.__oac_mtime__ = os.stat(origin).st_mtime_ns  # type: ignore[attr-defined]
        except OSError:
            pass
    target: object = module
    for part in attr.split("."):
        if not hasattr(target, part):
            raise FactoryError(f"factory {spec!r}: module {module_name!r} has no attribute {attr!r}")
        target = getattr(target, part)
    if isinstance(target, AgentRegistry):
        return target
    if not callable(target):
        raise FactoryError(f"factory {spec!r}: {attr!r} is not callable")
    if inspect.isbuiltin(target) or inspect.ismethoddescriptor(target):
        # `sys:exit`, `os:_exit`, `builtins:print`: not a project's factory, and calling it could end the run
        raise FactoryError(f"factory {spec!r}: {attr!r} is a built-in, not a function returning an AgentRegistry")
    factory: Callable[[], object] = target
    try:
        registry = factory()
    except KeyboardInterrupt:
        raise
    except OacError as exc:
        raise FactoryError(f"factory {spec!r} failed: {exc}") from None
    except Exception as exc:
        raise FactoryError(f"factory {spec!r} raised {_one_line(exc)}") from None
    except BaseException as exc:  # SystemExit, GeneratorExit, custom BaseException subclasses
        raise FactoryError(f"factory {spec!r} {_user_code_error(exc)}; a factory must return an AgentRegistry") from None
    if not isinstance(registry, AgentRegistry):
        raise FactoryError(f"factory {spec!r} returned {type(registry).__name__}, not an AgentRegistry")
    return registry
