"""`module:attribute` specs of invoker factories, model scripts and judges, through the one loader for user code
(`usercode.loader`): one-line errors, SystemExit included; digests over every project file the load ran or read."""

from collections.abc import Callable
from pathlib import Path
from typing import Any

from open_agent_compiler.usercode import loader

_LOADED: dict[tuple[str, str], loader.Loaded] = {}  # (spec, root) → its last load in this process (for keys)


def load_attribute(spec: str, root: Path, what: str) -> tuple[Any, str]:
    """(the object `spec` names, digest of every project file loading it ran or read: its module, the project
    modules that imports, their data files). Any problem: `OacError` naming `what` and spec."""
    loaded = loader.load(spec, root, what)
    _LOADED[(spec, str(root))] = loaded
    return loaded.target, loaded.digest()


module_exists = loader.module_exists


def call_factory(spec: str, root: Path, what: str, accepts: Callable[[Any], bool], lacks: str) -> Any:
    """What the user's zero-argument factory `spec` returns, if `accepts` it; otherwise (not callable, raised,
    exited, returned something that `lacks` what is needed) `OacError` naming `what` and spec."""
    made, loaded = loader.load_factory(spec, root, what, accepts, lacks)
    _LOADED[(spec, str(root))] = loaded
    return made


def digest_of(spec: str, root: Path, what: str) -> str:
    """The digest of `spec`'s last load here (what its factory read when called included), else of a new load."""
    loaded = _LOADED.get((spec, str(root)))
    return loaded.digest() if loaded is not None else load_attribute(spec, root, what)[1]
