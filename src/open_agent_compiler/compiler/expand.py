"""The agents a compile emits beyond one per slot: primary twins (`TemplateSlot.also_compile_as_primary`) and
variant passes (`VariantSpec`: the same agents on another model preset, under name + postfix).

Both are pure functions of a resolved config returning another resolved config, so every dialect treats a twin
or a variant agent like any other agent (same permissions, same body, own file).
"""

from collections.abc import Sequence

from open_agent_compiler.errors import OacError
from open_agent_compiler.model.core.agent import AgentVariant, ModelParameters
from open_agent_compiler.model.core.variant_spec import VariantSpec
from open_agent_compiler.model.registry import ResolvedAgent, ResolvedConfig

TWIN_SUFFIX = "-primary"


def _copy(agent: ResolvedAgent, **update: object) -> ResolvedAgent:
    # Validated anew, not model_copy: the copy must not inherit the original's cached content digest.
    return ResolvedAgent.model_validate({**dict(agent), **update})


def with_primary_twins(resolved: ResolvedConfig) -> ResolvedConfig:
    """Each non-primary agent whose slot asks for it also emitted as the primary `<compiled name>-primary`:
    same instructions and permissions, callable directly (`opencode run --agent …-primary`)."""
    names = {agent.compiled_name for agent in resolved.agents}
    twins = []
    for agent in resolved.agents:
        if not getattr(agent, "also_compile_as_primary", False) or agent.primary:
            continue
        name = agent.compiled_name + TWIN_SUFFIX
        if name in names:  # already emitted (e.g. a slot of that name): never two files for one name
            continue
        twins.append(_copy(agent, compiled_name=name, primary=True, also_compile_as_primary=False))
        names.add(name)
    if not twins:
        return resolved
    return resolved.model_copy(update={"agents": (*resolved.agents, *twins)})


def _variant_of(agent: ResolvedAgent, spec: VariantSpec) -> AgentVariant:
    parameters = agent.model_parameters or ModelParameters(model_name=spec.preset.qualified_model_name)
    return AgentVariant(postfix="", agent_mode="primary" if agent.primary else "subagent",
                        agent_definition=agent.definition, model_parameters=parameters)


def apply_variant(resolved: ResolvedConfig, spec: VariantSpec) -> tuple[ResolvedAgent, ...]:
    """The config's agents for one variant pass: names and subagent references + the postfix, and the preset's
    model where the spec applies to the agent (else the agent keeps its own)."""
    agents = []
    for agent in resolved.agents:
        variant = _variant_of(agent, spec)
        parameters = spec.preset_for(variant).to_model_parameters() if spec.applies_to(variant) \
            else agent.model_parameters
        agents.append(_copy(
            agent, compiled_name=agent.compiled_name + spec.postfix,
            subagents=tuple(name + spec.postfix for name in agent.subagents), model_parameters=parameters,
        ))
    return tuple(agents)


def with_variants(resolved: ResolvedConfig, variants: Sequence[VariantSpec]) -> ResolvedConfig:
    """All variant passes side by side in one config (one compile, one manifest per dialect); no variants:
    the config as it is. Two variants with one postfix would write the same files: an error."""
    if not variants:
        return resolved
    seen: dict[str, str] = {}
    for spec in variants:
        first = seen.setdefault(spec.postfix, spec.name)
        if first != spec.name:
            raise OacError(f"variants {first!r} and {spec.name!r} share the postfix {spec.postfix!r}")
    agents = [agent for spec in variants for agent in apply_variant(resolved, spec)]
    return resolved.model_copy(update={"agents": tuple(agents)})
