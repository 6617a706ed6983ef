"""Load a registry from a `module:callable` factory spec, with the project directory importable.

The import, the call and every failure go through `usercode.loader`, the one loader for user code.
"""

import os
from pathlib import Path

from pydantic import ValidationError

from open_agent_compiler.errors import FactoryError, OacError
from open_agent_compiler.model.registry import AgentRegistry
from open_agent_compiler.model.validation_errors import describe_validation_error
from open_agent_compiler.usercode import loader


def _one_line(exc: BaseException) -> str:
    if isinstance(exc, ValidationError):  # a definition with a bad or misspelled field
        return describe_validation_error(exc)
    return loader.one_line(exc)


def load_registry(spec: str, search_path: str | None = None) -> AgentRegistry:
    """Import `module` from `search_path` (default: the current directory) and call `callable()`.

    Every failure is a FactoryError whose one-line message names the spec.
    """
    module_name, sep, attr = spec.partition(":")
    if not sep or not module_name or not attr:
        raise FactoryError(f"factory {spec!r} must look like 'module:callable' (e.g. 'agents:registry')")
    root = os.path.abspath(search_path or os.getcwd())
    loaded = loader.load(spec, root=Path(root), what="factory", error=FactoryError, describe=_one_line,
                         expects="a function returning an AgentRegistry", keep_on_path=True)
    if isinstance(loaded.target, AgentRegistry):
        return loaded.target
    registry = loader.call(loaded, spec, "factory", error=FactoryError, describe=_one_line)
    if not isinstance(registry, AgentRegistry):
        raise FactoryError(f"factory {spec!r} returned {type(registry).__name__}, not an AgentRegistry")
    return registry

