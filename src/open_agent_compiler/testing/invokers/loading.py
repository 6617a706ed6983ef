"""Import what `module:attribute` names (invoker factories, model scripts, judges) with one-line errors."""

import importlib
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from open_agent_compiler.errors import OacError
from open_agent_compiler.model.hashing import digest_bytes


@contextmanager
def _on_path(root: Path) -> Iterator[None]:
    entry = str(root)
    added = entry not in sys.path
    if added:
        sys.path.insert(0, entry)
    try:
        yield
    finally:
        if added and entry in sys.path:
            sys.path.remove(entry)


def load_attribute(spec: str, root: Path, what: str) -> tuple[Any, str]:
    """(the object `spec` names, digest of its module's source). Any problem: `OacError` naming `what` and spec."""
    module_name, _, attribute = spec.partition(":")
    if not module_name or not attribute:
        raise OacError(f"{what} {spec!r} is not of the form 'module:attribute'")
    importlib.invalidate_caches()
    cached = sys.modules.get(module_name)
    cached_file = getattr(cached, "__file__", None)
    if cached_file and module_exists(module_name, root) and \
            not Path(cached_file).resolve().is_relative_to(Path(root).resolve()):
        del sys.modules[module_name]  # another project's module of that name (one process, several projects)
    with _on_path(root):
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as exc:
            if exc.name and (module_name == exc.name or module_name.startswith(exc.name + ".")):
                raise OacError(f"{what} {spec!r}: module {module_name!r} not found") from None
            raise OacError(f"{what} {spec!r}: importing {module_name!r} failed: {exc}") from None
        except Exception as exc:  # noqa: BLE001 - the user's module: one line, no traceback
            raise OacError(f"{what} {spec!r}: importing {module_name!r} failed: {type(exc).__name__}: {exc}") from None
    target: Any = module
    for part in attribute.split("."):
        if not hasattr(target, part):
            raise OacError(f"{what} {spec!r}: {module_name!r} has no attribute {attribute!r}")
        target = getattr(target, part)
    source = getattr(module, "__file__", None)
    try:
        content = Path(source).read_bytes() if source else b""
    except OSError:
        content = b""
    return target, digest_bytes(content)


def module_exists(module_name: str, root: Path) -> bool:
    """Whether `module_name` can be imported from `root` (without importing it)."""
    return (root / (module_name.replace(".", "/") + ".py")).is_file() or \
        (root / module_name.replace(".", "/") / "__init__.py").is_file()


def call_factory(spec: str, root: Path, what: str, accepts: Callable[[Any], bool], lacks: str) -> Any:
    """What the user's zero-argument factory `spec` returns, if `accepts` it; otherwise (not callable, raised,
    returned something that `lacks` what is needed) `OacError` naming `what` and spec."""
    factory, _ = load_attribute(spec, root, what)
    if not callable(factory):
        raise OacError(f"{what} {spec!r} is a {type(factory).__name__}, not callable")
    try:
        made = factory()
    except Exception as exc:  # noqa: BLE001 - the user's factory: one line, no traceback
        raise OacError(f"{what} {spec!r} raised {type(exc).__name__}: {exc}") from None
    if not accepts(made):
        raise OacError(f"{what} {spec!r} returned a {type(made).__name__}, which has {lacks}")
    return made
