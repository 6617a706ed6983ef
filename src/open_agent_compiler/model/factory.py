"""Load a registry from a `module:callable` factory spec, with the current directory importable."""

import importlib
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


def _forget_foreign(module_name: str, root: str) -> None:
    """Drop a cached module of that name loaded from another project, so each project gets its own."""
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
    except Exception as exc:
        raise FactoryError(f"factory {spec!r}: importing {module_name!r} failed: {_one_line(exc)}") from None
    try:
        module.__oac_mtime__ = os.stat(module.__file__).st_mtime_ns  # type: ignore[attr-defined, arg-type]
    except (OSError, TypeError):
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
    factory: Callable[[], object] = target
    try:
        registry = factory()
    except OacError as exc:
        raise FactoryError(f"factory {spec!r} failed: {exc}") from None
    except Exception as exc:
        raise FactoryError(f"factory {spec!r} raised {_one_line(exc)}") from None
    if not isinstance(registry, AgentRegistry):
        raise FactoryError(f"factory {spec!r} returned {type(registry).__name__}, not an AgentRegistry")
    return registry
