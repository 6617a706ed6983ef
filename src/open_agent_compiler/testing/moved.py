"""Module paths that moved out of `testing/` when it was split (issue 31), each still importable under its old
name as the very same module object. This table is the one list of them; nothing of the public package's contract
moved (its `testing` paths are `testing` and `testing.evaluation`, which stay)."""

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
from types import ModuleType

MOVED = {
    "open_agent_compiler.testing.deadline": "open_agent_compiler.execution.deadline",
    "open_agent_compiler.testing.handler_child": "open_agent_compiler.execution.handler_child",
    "open_agent_compiler.testing.handlers": "open_agent_compiler.execution.handlers",
    "open_agent_compiler.testing.keeper": "open_agent_compiler.execution.keeper",
    "open_agent_compiler.testing.leftovers": "open_agent_compiler.execution.leftovers",
    "open_agent_compiler.testing.prefetch": "open_agent_compiler.execution.prefetch",
    "open_agent_compiler.testing.process_tree": "open_agent_compiler.execution.process_tree",
    "open_agent_compiler.testing.zygote": "open_agent_compiler.execution.zygote",
    "open_agent_compiler.testing.results": "open_agent_compiler.history.log",
    "open_agent_compiler.testing.history": "open_agent_compiler.history.views",
    "open_agent_compiler.testing.history_index": "open_agent_compiler.history.index",
    "open_agent_compiler.testing.history_scan": "open_agent_compiler.history.scan",
    "open_agent_compiler.testing.merge": "open_agent_compiler.history.merge",
    "open_agent_compiler.testing.report_html": "open_agent_compiler.history.report_html",
    "open_agent_compiler.testing.keys": "open_agent_compiler.keys.key",
    "open_agent_compiler.testing.key_cache": "open_agent_compiler.keys.cache",
}


class MovedModules(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Consulted only after the normal finders missed (appended to `sys.meta_path`): an old path is its new module."""

    def find_spec(self, fullname: str, path: object = None, target: object = None) -> importlib.machinery.ModuleSpec | None:
        return importlib.util.spec_from_loader(fullname, self) if fullname in MOVED else None

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        return importlib.import_module(MOVED[spec.name])

    def exec_module(self, module: ModuleType) -> None:
        """Already executed under its new name."""


def install() -> None:
    if not any(isinstance(finder, MovedModules) for finder in sys.meta_path):
        sys.meta_path.append(MovedModules())
