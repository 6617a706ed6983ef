"""A warm `oac test` validates none of the run-time models (records, outcomes, read-backs, evaluation context,
the compile's plan and the planned output): they are built by pydantic when first used, not when imported."""

import subprocess
import sys

DEFERRED = {
    "open_agent_compiler.tasks.planning": ["Compiled"],
    "open_agent_compiler.history.log": ["TestOutcome", "TestRecord"],
    "open_agent_compiler.testing.evaluators._paths": ["PathLookup"],
    "open_agent_compiler.compiler.dialect": ["AgentPlan"],
    "open_agent_compiler.compiler.prompt": ["BodyFacts"],
    "open_agent_compiler.compiler.grants": ["AgentGrants"],
    "open_agent_compiler.model.core.evaluator": ["EvaluationContext", "ToolCall", "JudgeVerdict"],
    "open_agent_compiler.model.core.capabilities": ["Capabilities"],
}

PROBE = f"""
import importlib
import open_agent_compiler.cli.test_cmd  # what `oac test` imports before it plans
built = []
for module, names in {DEFERRED!r}.items():
    for name in names:
        if getattr(importlib.import_module(module), name).__pydantic_complete__:
            built.append(module + "." + name)
print(built)
"""


def test_run_time_models_are_not_built_at_import() -> None:
    done = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


def test_deferred_models_validate_and_stay_frozen() -> None:
    from pydantic import ValidationError
    import pytest

    from open_agent_compiler.model.core.capabilities import Capabilities
    from open_agent_compiler.model.core.evaluator import ToolCall
    from open_agent_compiler.history.log import TestOutcome

    caps = Capabilities(agent="a", dialect="opencode", bash={"git *": "allow"})
    assert caps.bash == {"git *": "allow"}
    with pytest.raises(ValidationError):
        caps.agent = "b"  # type: ignore[misc]
    with pytest.raises(ValidationError):
        Capabilities(agent="a", dialect="opencode", bash={"git *": "sometimes"})
    with pytest.raises(ValidationError):
        ToolCall(tool_name=3)
    assert TestOutcome(status="pass", score=1.0).status == "pass"
