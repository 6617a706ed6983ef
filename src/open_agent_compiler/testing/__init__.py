"""Evaluators, mocks, runners and the compiled-artifact loader. No doit here."""

from open_agent_compiler.testing.artifacts import AgentArtifact, list_agent_artifacts, load_agent_artifact
from open_agent_compiler.testing.evaluation import evaluate
from open_agent_compiler.testing.run_context import EvaluationResult, RunContext, ToolCallRecord
