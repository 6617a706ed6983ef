"""Resolved values compare by their fields: the caches they fill on first use (digest, grants, slot index) do not
make a used value unequal to a fresh one, and a different field still does."""

from open_agent_compiler import (
    AgentDefinition,
    AgentHeader,
    AgentRegistry,
    CompilationConfig,
    ModelParameters,
    TemplateSlot,
    TemplateTree,
)
from open_agent_compiler.compiler.grants import agent_grants
from open_agent_compiler.model.registry import ResolvedConfig


def resolved(model_name: str = "m") -> ResolvedConfig:
    reg = AgentRegistry()
    lead = reg.register_agent("lead", AgentDefinition(header=AgentHeader(agent_id="lead", name="lead")),
                              ModelParameters(model_name=model_name))
    reg.register_template(TemplateTree(name="t", slots=[TemplateSlot(name="primary", default_agent_id=lead)]))
    reg.create_compilation_config(CompilationConfig(name="c", template_name="t"))
    return reg.resolve_config("c")


def test_a_used_value_equals_a_fresh_one() -> None:
    used, fresh = resolved(), resolved()
    agent = used.agent("primary")  # fills the slot index
    agent.content_digest()
    agent_grants(agent)
    assert agent._digest is not None and agent._grants is not None and fresh.agent("primary")._digest is None
    assert agent == fresh.agent("primary") and used == fresh


def test_a_different_field_is_still_unequal() -> None:
    first, other = resolved("m"), resolved("n")
    assert first.agent("primary") != other.agent("primary") and first != other
    assert first.agent("primary") != "primary"
