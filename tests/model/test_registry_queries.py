"""The registry answers the public package's queries (ids, None for unknown, presets, slot -> variant) and ours."""

import pytest

from open_agent_compiler import (
    AgentDefinition,
    AgentHeader,
    AgentRegistry,
    AgentVariant,
    CompilationConfig,
    ModelParameters,
    ModelPreset,
    SamplingDefaults,
    TemplateSlot,
    TemplateTree,
)
from open_agent_compiler.errors import RegistryError


def agent(agent_id: str, **fields) -> AgentDefinition:  # type: ignore[no-untyped-def]
    return AgentDefinition(header=AgentHeader(agent_id=agent_id, name=agent_id), **fields)


FAST = ModelPreset(name="fast", provider="zai", model_id="glm-4.5-air", sampling=SamplingDefaults(temperature=0.2))
DEEP = ModelPreset(name="deep", provider="anthropic", model_id="claude-sonnet-4-5", reasoning=True)


def test_ids_are_formed_from_name_model_and_temperature() -> None:
    reg = AgentRegistry()
    first = reg.register_agent("orch", agent("orch"), ModelParameters(model_name="zai/glm-4.5", temperature=0.0))
    second = reg.register_agent("orch", agent("orch"), ModelParameters(model_name="zai/glm-4.6"))
    assert (first, second) == ("orch_zai_glm-4.5_t0.0", "orch_zai_glm-4.6_tNone")
    assert reg.list_agents() == [first, second]
    variant = reg.get_agent(second)
    assert isinstance(variant, AgentVariant)
    assert variant.model_parameters is not None and variant.model_parameters.model_name == "zai/glm-4.6"
    assert variant.agent_definition.header.agent_id == "orch"
    assert reg.get_agent("nope") is None
    # the definition's own id finds its first registration
    assert reg.registered_agent("orch").registry_id == first
    with pytest.raises(RegistryError, match="already registered"):
        reg.register_agent("orch", agent("orch"), ModelParameters(model_name="zai/glm-4.5", temperature=0.0))


def test_one_definition_under_two_presets() -> None:
    reg = AgentRegistry()
    fast = reg.register_agent_with_preset("orch", agent("orch"), FAST)
    deep = reg.register_agent_with_preset("orch", agent("orch"), DEEP)
    assert (fast, deep) == ("orch_fast_t0.2", "orch_deep_tNone")
    assert reg.list_presets() == ["fast", "deep"]
    assert reg.get_preset("deep") == DEEP and reg.get_preset("none") is None
    assert reg.preset_for(fast) == FAST and reg.preset_for("missing") is None
    deep_variant = reg.get_agent(deep)
    assert deep_variant is not None and deep_variant.model_parameters == ModelParameters(
        model_name="anthropic/claude-sonnet-4-5", reasoning_effort="high")
    plain = reg.register_agent("other", agent("other"), ModelParameters(model_name="m"))
    assert reg.preset_for(plain) is None
    with pytest.raises(RegistryError, match="model preset 'fast' is already registered with different settings"):
        reg.register_agent_with_preset("x", agent("x"), FAST.model_copy(update={"model_id": "other"}))


def test_resolve_config_reads_as_slot_to_variant() -> None:
    reg = AgentRegistry()
    lead = reg.register_agent("lead", agent("lead", subagents=[AgentHeader(agent_id="helper", name="helper")]),
                              ModelParameters(model_name="m1"))
    helper = reg.register_agent("helper", agent("helper"), ModelParameters(model_name="m2"))
    reg.register_template(TemplateTree(name="t", slots=[
        TemplateSlot(name="primary", default_agent_id=lead),
        TemplateSlot(name="helper", default_agent_id="helper_*", also_compile_as_primary=True),
    ]))
    reg.create_compilation_config(CompilationConfig(name="c", template_name="t", postfix="-v2"))
    assert reg.list_configs() == ["c"] and reg.get_config("c") is not None and reg.get_config("x") is None
    resolved = reg.resolve_config("c")
    assert list(resolved) == ["primary", "helper"] and len(resolved) == 2 and "helper" in resolved
    primary, sub = resolved["primary"], resolved["helper"]
    assert (primary.agent_mode, primary.postfix, primary.also_compile_as_primary) == ("primary", "-v2", False)
    assert (sub.agent_mode, sub.also_compile_as_primary) == ("subagent", True)
    assert sub.agent_definition == reg.get_agent(helper).agent_definition  # type: ignore[union-attr]
    assert dict(resolved.items())["helper"] == sub and resolved.get("ghost") is None
    with pytest.raises(KeyError, match="ghost"):
        resolved["ghost"]
    # our richer view is still there
    assert resolved.agent("primary").subagents == ("helper-v2",) and resolved.agent("helper").also_compile_as_primary


def test_a_wildcard_that_matches_nothing_is_unknown() -> None:
    reg = AgentRegistry()
    reg.register_agent("a", agent("a"))
    reg.register_template(TemplateTree(name="t", slots=[TemplateSlot(name="primary", default_agent_id="zz_*")]))
    with pytest.raises(RegistryError, match="slot 'primary' names unknown agent 'zz_\\*'"):
        reg.create_compilation_config(CompilationConfig(name="c", template_name="t"))


def test_strict_validation_off_defers_checks_to_resolution() -> None:
    reg = AgentRegistry()
    reg.create_compilation_config(CompilationConfig(name="early", template_name="later", strict_validation=False))
    with pytest.raises(RegistryError, match="unknown template 'later'"):
        reg.resolve_config("early")
    reg.register_agent("a", agent("a"))
    reg.register_template(TemplateTree(name="later", slots=[TemplateSlot(name="primary", default_agent_id="a")]))
    assert reg.resolve_config("early").agent("primary").agent_name == "a"


def test_lookups_by_name_return_none_or_names() -> None:
    reg = AgentRegistry()
    reg.register_template(TemplateTree(name="t", slots=[]))
    assert reg.list_templates() == ["t"] and reg.get_template("t") is not None and reg.get_template("u") is None
    assert reg.list_mock_profiles() == [] and reg.get_mock_profile("ci") is None
    with pytest.raises(RegistryError, match="unknown template 'u'"):
        reg.template("u")


def test_registry_errors_are_value_errors_too() -> None:
    reg = AgentRegistry()
    with pytest.raises(ValueError, match="unknown compilation config 'missing'"):
        reg.resolve_config("missing")
