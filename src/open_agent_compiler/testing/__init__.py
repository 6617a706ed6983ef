"""Evaluators, mocks, runners and the compiled-artifact loader. No doit here.

The names below are imported on first use (PEP 562): importing one module of this package (the evaluators a
registry names) does not import the artifact loader and through it every dialect (issue 18)."""

import importlib
from typing import Any

from open_agent_compiler.testing import moved

moved.install()  # old module paths of what moved to execution/, history/ and keys/ (listed in `moved.MOVED`)

_EXPORTS = {"AgentArtifact": "artifacts", "list_agent_artifacts": "artifacts", "load_agent_artifact": "artifacts",
            "evaluate": "evaluation", "EvaluationResult": "run_context", "RunContext": "run_context",
            "ToolCallRecord": "run_context"}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    if name not in _EXPORTS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{_EXPORTS[name]}"), name)
