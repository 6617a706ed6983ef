"""Evaluators, mocks, runners and the compiled-artifact loader. No doit here."""

from open_agent_compiler.testing.artifacts import AgentArtifact, list_agent_artifacts, load_agent_artifact
