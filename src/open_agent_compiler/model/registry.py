"""The agent registry and config resolution: slots → agents → reachable tools, validated once."""

import re
from collections import Counter
from collections.abc import Iterator, KeysView
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, PrivateAttr

from open_agent_compiler.errors import RegistryError
from open_agent_compiler.model.hashing import digest_model, digest_model_json
from open_agent_compiler.model.core.base import SharedFieldsSet, private_attributes, unvalidated
from open_agent_compiler.model.core.agent import AgentDefinition, AgentVariant, ModelParameters
from open_agent_compiler.model.core.evaluator import json_digest_is_faithful
from open_agent_compiler.model.core.mock import MockProfile
from open_agent_compiler.model.core.model_preset import ModelPreset
from open_agent_compiler.model.core.template import PRIMARY_SLOT, CompilationConfig, TemplateTree
from open_agent_compiler.model.core.tool import ToolDefinition
from open_agent_compiler.model.names import check_postfix, check_segment


class RegisteredAgent(SharedFieldsSet):
    """One registration: `registry_id` is what `register_agent` returned; `agent_id` the definition's own id."""

    model_config = ConfigDict(frozen=True)

    registry_id: str
    name: str
    definition: AgentDefinition
    model_parameters: ModelParameters | None = None
    preset: str | None = None

    @property
    def agent_id(self) -> str:
        return self.definition.header.agent_id

    def variant(self) -> AgentVariant:
        return AgentVariant(agent_definition=self.definition, model_parameters=self.model_parameters)


def registry_id(name: str, model_parameters: ModelParameters | None, preset: str | None = None) -> str:
    """The id a registration gets, as the public package forms it: name, model (or preset) and temperature."""
    model = preset or (model_parameters.model_name if model_parameters else "default")
    temperature = model_parameters.temperature if model_parameters else None
    return f"{name}_{re.sub(r'[^a-zA-Z0-9.-]', '_', model)}_t{temperature}"


class ReachableTool(SharedFieldsSet):
    """A tool and the place it was found, for messages that name both sides of a conflict."""

    model_config = ConfigDict(frozen=True)

    tool: ToolDefinition
    where: str

    @classmethod
    def found(cls, tool: ToolDefinition, where: str) -> "ReachableTool":
        """What `ReachableTool(tool=tool, where=where)` gives (the same objects, the same fields set), without
        validating a tool taken from a validated definition and the place `resolve_config` formats: ~13,000
        instructions a tool, 3,000 tools in the benchmark's config."""
        return unvalidated(cls, {"tool": tool, "where": where}, _TOOL_AND_WHERE)


_TOOL_AND_WHERE = {"tool", "where"}  # the fields set every ReachableTool shares (never changed in place)


def _same_fields(model: BaseModel, other: BaseModel) -> bool:
    """pydantic's equality without the private attributes: those are caches of what the fields determine, so a
    value whose cache is filled equals a fresh one."""
    return model.__dict__ == other.__dict__ and model.__pydantic_extra__ == other.__pydantic_extra__


class ResolvedAgent(SharedFieldsSet):
    """One slot of a resolved config: the agent that fills it and the names it compiles under."""

    model_config = ConfigDict(frozen=True)

    slot: str
    compiled_name: str
    primary: bool
    agent_name: str
    definition: AgentDefinition
    model_parameters: ModelParameters | None
    subagents: tuple[str, ...]  # compiled names of referenced subagents
    tools: tuple[ReachableTool, ...]
    postfix: str = ""
    also_compile_as_primary: bool = False  # also emitted as the primary "<compiled_name>-primary"
    _digest: str | None = PrivateAttr(default=None)
    _grants: Any = PrivateAttr(default=None)  # compiler.grants.agent_grants, computed once (see there)

    def __eq__(self, other: object) -> bool:
        return _same_fields(self, other) if type(other) is type(self) else NotImplemented  # type: ignore[arg-type]

    @classmethod
    def resolved(cls, slot: str, compiled_name: str, primary: bool, agent_name: str, definition: AgentDefinition,
                 model_parameters: ModelParameters | None, subagents: tuple[str, ...],
                 tools: tuple[ReachableTool, ...], postfix: str, also_compile_as_primary: bool) -> "ResolvedAgent":
        """What `ResolvedAgent(...)` with every field given makes (the same objects, fields set and private
        attributes), without validating what `resolve_config` takes from validated registrations and forms
        itself: ~44,000 instructions an agent."""
        return unvalidated(cls, {
            "slot": slot, "compiled_name": compiled_name, "primary": primary, "agent_name": agent_name,
            "definition": definition, "model_parameters": model_parameters, "subagents": subagents, "tools": tools,
            "postfix": postfix, "also_compile_as_primary": also_compile_as_primary},
            _EVERY_AGENT_FIELD, {"_digest": None, "_grants": None})

    def content_digest(self) -> str:
        """Digest of this slot's whole resolved content, computed once (the model is frozen); the render memo
        and the test-key cache both start from it. When `tools` is what the slot and the definition give (the
        same tool objects found at the same places, as `resolve_config` makes them), every tool is already in
        the definition's dump: `tools` is left out of it (a third of an agent's dumped bytes), and a dump
        without a `tools` key is never one of an agent whose tools were given otherwise (that dump has one)."""
        private = private_attributes(self)  # (`self._digest` first misses the instance: ~10 µs)
        found = private["_digest"]
        if found is None:  # (JSON from Rust with the blurrable positions tagged; pickled when a user's evaluator
            # class has a position JSON blurs: see model/digest_coverage.py)
            digest = digest_model_json if json_digest_is_faithful() else digest_model
            found = private["_digest"] = digest(self, exclude=_TOOLS) if self._tools_derived() else digest(self)
        return found

    def _tools_derived(self) -> bool:
        places, tools = reachable_places(self.slot, self.definition), self.tools
        if len(places) != len(tools):
            return False
        for reachable, (tool, where) in zip(tools, places):
            if reachable.tool is not tool or reachable.where != where:
                return False
        return True

    @property
    def description(self) -> str:
        d = self.definition
        return d.header.description or d.usage_explanation_short or d.header.name

    def variant(self) -> AgentVariant:
        """This slot as the public package's AgentVariant (postfix, mode, definition, model)."""
        return AgentVariant(
            postfix=self.postfix,
            agent_mode="primary" if self.primary else "subagent",
            agent_definition=self.definition,
            model_parameters=self.model_parameters,
            also_compile_as_primary=self.also_compile_as_primary,
        )


_EVERY_AGENT_FIELD = set(ResolvedAgent.model_fields)  # the fields set of every resolved agent (never changed in place)


class ResolvedConfig(BaseModel):
    """The filled slots of a config. Also reads like the public package's result, a mapping slot -> AgentVariant:
    `resolved["primary"].agent_definition`, `resolved.items()`, `for slot in resolved`."""

    model_config = ConfigDict(frozen=True)

    config: CompilationConfig
    template: TemplateTree
    agents: tuple[ResolvedAgent, ...]
    mock_profiles: dict[str, MockProfile]
    _by_slot: dict[str, ResolvedAgent] | None = PrivateAttr(default=None)
    _tools: tuple[Any, tuple[ReachableTool, ...]] | None = PrivateAttr(default=None)  # (of `agents`, `tools()`)

    def __eq__(self, other: object) -> bool:
        return _same_fields(self, other) if type(other) is type(self) else NotImplemented  # type: ignore[arg-type]

    def agent(self, slot: str) -> ResolvedAgent:
        private = private_attributes(self)
        by_slot = private["_by_slot"]
        if by_slot is None:  # built once; a private attribute may be set on a frozen model
            by_slot = private["_by_slot"] = {agent.slot: agent for agent in self.agents}
        try:
            return by_slot[slot]
        except KeyError:
            raise RegistryError(f"config {self.config.name!r} has no slot {slot!r}") from None

    def __getitem__(self, slot: str) -> AgentVariant:
        if not any(agent.slot == slot for agent in self.agents):
            raise KeyError(slot)
        return self.agent(slot).variant()

    def __iter__(self) -> Iterator[str]:  # type: ignore[override]  # a mapping iterates its keys
        return iter([agent.slot for agent in self.agents])

    def __len__(self) -> int:
        return len(self.agents)

    def __contains__(self, slot: object) -> bool:
        return any(agent.slot == slot for agent in self.agents)

    def keys(self) -> KeysView[str]:
        return {agent.slot: None for agent in self.agents}.keys()

    def values(self) -> list[AgentVariant]:
        return [agent.variant() for agent in self.agents]

    def items(self) -> list[tuple[str, AgentVariant]]:
        return [(agent.slot, agent.variant()) for agent in self.agents]

    def get(self, slot: str, default: AgentVariant | None = None) -> AgentVariant | None:
        return self[slot] if slot in self else default

    def tools(self) -> list[ReachableTool]:
        """Every reachable tool once, first place found kept. Found once (the model is frozen; a run asks up to
        three times: script targets, script files, discovery's profile check); each call gets its own list."""
        private = private_attributes(self)
        agents = self.agents
        found = private["_tools"]
        if found is None or found[0] is not agents:  # (a `model_copy` with other agents copies this cache too)
            seen: dict[str, ReachableTool] = {}
            for agent in agents:
                for reachable in agent.tools:
                    seen.setdefault(reachable.tool.header.name, reachable)
            found = private["_tools"] = (agents, tuple(seen.values()))
        return list(found[1])


_TOOLS = {"tools"}  # what `ResolvedAgent.content_digest` leaves out when the tools are derived


def _tool_places(slot: str, definition: AgentDefinition) -> Iterator[tuple[ToolDefinition, str]]:
    """Every tool the definition names, with the place it is named, in definition order."""
    if definition.extra_tools:
        where = f"slot {slot!r} extra_tools"
        for tool in definition.extra_tools:
            yield tool, where
    for skill in definition.skills:
        for step in skill.workflow_steps:
            for tool in step.tools_used:
                yield tool, f"slot {slot!r} skill {skill.name!r} step {step.header!r}"


def _agent_tools(slot: str, definition: AgentDefinition) -> Iterator[ReachableTool]:
    for tool, where in _tool_places(slot, definition):
        yield ReachableTool.found(tool, where)


def reachable_places(slot: str, definition: AgentDefinition) -> list[tuple[ToolDefinition, str]]:
    """The (tool, place) pairs a resolved slot keeps: the first place of each tool name (`resolve_config`)."""
    kept: dict[str, tuple[ToolDefinition, str]] = {}
    for tool, where in _tool_places(slot, definition):
        kept.setdefault(tool.name, (tool, where))
    return list(kept.values())


class AgentRegistry:
    """Holds agents, templates, compilation configs, model presets and mock profiles. Names are unique per kind.

    An agent is registered under an id formed from its name, model (or preset) and temperature, like the public
    package does, so one definition may be registered with several models; its definition's `agent_id` also
    finds it (the first registration with that id). Slots may name agents by either id, or by a `*` pattern.
    """

    def __init__(self) -> None:
        self._agents: dict[str, RegisteredAgent] = {}
        self._by_agent_id: dict[str, str] = {}  # definition agent_id -> registry id of its first registration
        self._templates: dict[str, TemplateTree] = {}
        self._configs: dict[str, CompilationConfig] = {}
        self._presets: dict[str, ModelPreset] = {}
        self._mock_profiles: dict[str, MockProfile] = {}

    # registration -------------------------------------------------------------------------------------------
    def register_agent(
        self, name: str, agent_definition: AgentDefinition, model_parameters: ModelParameters | None = None
    ) -> str:
        """Register and return the agent's registry id."""
        return self._register(name, agent_definition, model_parameters, None)

    def register_agent_with_preset(self, name: str, agent_definition: AgentDefinition, preset: ModelPreset) -> str:
        """Register with a model preset (kept by name; one name, one preset). The id names the preset."""
        known = self._presets.get(preset.name)
        if known is not None and known != preset:
            raise RegistryError(f"model preset {preset.name!r} is already registered with different settings")
        registry_id = self._register(name, agent_definition, preset.to_model_parameters(), preset.name)
        self._presets[preset.name] = preset
        return registry_id

    def register_with_improvements(
        self,
        name: str,
        agent_definition: AgentDefinition,
        model_parameters: ModelParameters | None = None,
        *,
        project_root: Path | None = None,
        model_class: str | None = None,
        client_id: str | None = None,
    ) -> str:
        """Register after applying the promoted snapshots found under `<project_root>/.oac/promoted/` (see
        `open_agent_compiler.improvement`); without any, the definition is registered as given."""
        from open_agent_compiler.improvement import apply_promoted_to_tree  # reads files: imported only here

        improved = apply_promoted_to_tree(
            agent_definition, project_root, model_class=model_class, client_id=client_id
        )
        return self.register_agent(name, improved, model_parameters)

    def _register(
        self, name: str, definition: AgentDefinition, model_parameters: ModelParameters | None, preset: str | None
    ) -> str:
        check_segment(name, "agent name")
        agent_id = check_segment(definition.header.agent_id, "agent_id")
        new_id = registry_id(name, model_parameters, preset)
        if new_id in self._agents:
            raise RegistryError(f"agent {new_id!r} is already registered (same name, model and temperature)")
        self._agents[new_id] = RegisteredAgent(
            registry_id=new_id, name=name, definition=definition, model_parameters=model_parameters, preset=preset
        )
        self._by_agent_id.setdefault(agent_id, new_id)
        return new_id

    def register_template(self, template_tree: TemplateTree) -> str:
        template = template_tree
        if template.name in self._templates:
            raise RegistryError(f"template {template.name!r} is already registered")
        names = [slot.name for slot in template.slots]
        for name in names:
            check_segment(name, f"slot name in template {template.name!r}:")
        duplicates = sorted(name for name, count in Counter(names).items() if count > 1)
        if duplicates:
            raise RegistryError(f"template {template.name!r} has duplicate slots: {', '.join(duplicates)}")
        self._templates[template.name] = template
        return template.name

    def create_compilation_config(self, config: CompilationConfig) -> str:
        if config.name in self._configs:
            raise RegistryError(f"compilation config {config.name!r} is already registered")
        check_segment(config.name, "compilation config name")  # it names a directory under .oac/build
        check_postfix(config.postfix)
        if config.strict_validation:
            self._check_config(config)
        self._configs[config.name] = config
        return config.name

    def _check_config(self, config: CompilationConfig) -> None:
        """Every template, slot and agent the config names exists (resolution checks again either way)."""
        template = self._templates.get(config.template_name)
        if template is None:
            raise RegistryError(f"compilation config {config.name!r} names unknown template {config.template_name!r}")
        slot_names = {slot.name for slot in template.slots}
        for slot_name, agent_id in config.slot_overrides.items():
            if slot_name not in slot_names:
                raise RegistryError(f"compilation config {config.name!r} overrides unknown slot {slot_name!r}")
            if self._find(agent_id) is None:
                raise RegistryError(
                    f"compilation config {config.name!r} puts unknown agent {agent_id!r} in slot {slot_name!r}"
                )
        for slot in template.slots:
            if slot.name not in config.slot_overrides and self._find(slot.default_agent_id) is None:
                raise RegistryError(
                    f"template {template.name!r} slot {slot.name!r} names unknown agent {slot.default_agent_id!r}"
                )

    def register_mock_profile(self, profile: MockProfile) -> str:
        if profile.name in self._mock_profiles:
            raise RegistryError(f"mock profile {profile.name!r} is already registered")
        self._mock_profiles[profile.name] = profile
        return profile.name

    # the public package's queries: ids and names, None when unknown -----------------------------------------
    def list_agents(self) -> list[str]:
        return list(self._agents)

    def get_agent(self, agent_id: str) -> AgentVariant | None:
        found = self._find(agent_id)
        return found.variant() if found is not None else None

    def list_templates(self) -> list[str]:
        return list(self._templates)

    def get_template(self, name: str) -> TemplateTree | None:
        return self._templates.get(name)

    def list_configs(self) -> list[str]:
        return list(self._configs)

    def get_config(self, name: str) -> CompilationConfig | None:
        return self._configs.get(name)

    def list_presets(self) -> list[str]:
        return list(self._presets)

    def get_preset(self, name: str) -> ModelPreset | None:
        return self._presets.get(name)

    def preset_for(self, agent_id: str) -> ModelPreset | None:
        """The preset an agent was registered with; None for one registered with model parameters."""
        found = self._find(agent_id)
        return self._presets.get(found.preset) if found is not None and found.preset else None

    def list_mock_profiles(self) -> list[str]:
        return list(self._mock_profiles)

    def get_mock_profile(self, name: str) -> MockProfile | None:
        return self._mock_profiles.get(name)

    # our queries: whole records, unknown names raise ----------------------------------------------------------
    def registered_agent(self, agent_id: str) -> RegisteredAgent:
        found = self._find(agent_id)
        if found is None:
            raise RegistryError(f"unknown agent {agent_id!r}; registered: {', '.join(self._agents) or 'none'}")
        return found

    def registered_agents(self) -> list[RegisteredAgent]:
        return list(self._agents.values())

    def template(self, name: str) -> TemplateTree:
        try:
            return self._templates[name]
        except KeyError:
            raise RegistryError(f"unknown template {name!r}") from None

    def templates(self) -> list[TemplateTree]:
        return list(self._templates.values())

    def get_compilation_config(self, name: str) -> CompilationConfig:
        try:
            return self._configs[name]
        except KeyError:
            known = ", ".join(self._configs) or "none"
            raise RegistryError(f"unknown compilation config {name!r}; known: {known}") from None

    def list_compilation_configs(self) -> list[CompilationConfig]:
        return list(self._configs.values())

    def mock_profile(self, name: str) -> MockProfile:
        try:
            return self._mock_profiles[name]
        except KeyError:
            raise RegistryError(f"unknown mock profile {name!r}") from None

    def mock_profiles(self) -> list[MockProfile]:
        return list(self._mock_profiles.values())

    def _find(self, ref: str) -> RegisteredAgent | None:
        """By registry id, by definition agent_id, or the first registry id a `*` pattern matches."""
        if ref in self._agents:
            return self._agents[ref]
        if ref in self._by_agent_id:
            return self._agents[self._by_agent_id[ref]]
        if "*" in ref:
            for key, registered in self._agents.items():
                if fnmatchcase(key, ref):
                    return registered
        return None

    # resolution ---------------------------------------------------------------------------------------------
    def resolve_config(self, config_name: str) -> ResolvedConfig:
        """Fill every slot, compute compiled names, resolve subagent references and reachable tools.

        Raises RegistryError for an unknown config, a subagent that fills no slot (or several), and two
        different tools that share a name anywhere in the config.
        """
        name = config_name
        config = self.get_compilation_config(name)
        template = self.template(config.template_name)
        postfix = check_postfix(config.postfix)
        filled = [
            (slot.name, self.registered_agent(config.slot_overrides.get(slot.name, slot.default_agent_id)))
            for slot in template.slots
        ]
        twin = {slot.name: slot.also_compile_as_primary for slot in template.slots}
        slots_of: dict[str, list[str]] = {}
        for slot_name, registered in filled:  # a subagent reference may use either id
            for key in dict.fromkeys((registered.agent_id, registered.registry_id)):
                slots_of.setdefault(key, []).append(slot_name)

        seen_tools: dict[str, ReachableTool] = {}
        agents = []
        for slot_name, registered in filled:
            subagents = []
            for ref in registered.definition.subagents:
                slots = slots_of.get(ref.agent_id, [])
                if len(slots) != 1:
                    problem = "fills no slot" if not slots else f"fills several slots ({', '.join(slots)})"
                    raise RegistryError(
                        f"config {name!r}: subagent {ref.agent_id!r} of slot {slot_name!r} {problem} "
                        f"in template {template.name!r}"
                    )
                subagents.append(slots[0] + postfix)
            unique: dict[str, ReachableTool] = {}  # the first place of each name, in order
            for reachable in _agent_tools(slot_name, registered.definition):
                tool_name = reachable.tool.header.name
                first = seen_tools.setdefault(tool_name, reachable)
                if first is not reachable and first.tool != reachable.tool:
                    raise RegistryError(
                        f"config {name!r}: two different tools are named {tool_name!r}: "
                        f"{first.where} and {reachable.where}"
                    )
                unique.setdefault(tool_name, reachable)
            agents.append(
                ResolvedAgent.resolved(
                    slot=slot_name,
                    compiled_name=check_segment(slot_name + postfix, "compiled agent name"),
                    primary=slot_name == PRIMARY_SLOT,
                    agent_name=registered.name,
                    definition=registered.definition,
                    model_parameters=registered.model_parameters,
                    subagents=tuple(subagents),
                    tools=tuple(unique.values()),
                    postfix=postfix,
                    also_compile_as_primary=twin[slot_name],
                )
            )
        return ResolvedConfig(
            config=config, template=template, agents=tuple(agents), mock_profiles=dict(self._mock_profiles)
        )
