"""The only layer that knows doit: the task graph, its reporter and its backend.

A project's dodo.py gets the same graph as `oac test` with::

    from open_agent_compiler.tasks import DOIT_CONFIG, task_compile, task_test  # noqa: F401
"""

import importlib
from typing import Any

# Each name is imported on first use (PEP 562), so importing one module of this package (`oac test` needs
# `tasks.run`, not the compile tasks and their writer) does not import all of them.
_EXPORTS = {"task_compile": "compile_tasks", "DOIT_CONFIG": "dodo_api", "task_test": "dodo_api", "run_tests": "run",
            "TestOptions": "settings", "build_options": "settings"}

__all__ = ["DOIT_CONFIG", "TestOptions", "build_options", "run_tests", "task_compile", "task_test"]


def __getattr__(name: str) -> Any:
    if name not in _EXPORTS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{_EXPORTS[name]}"), name)
