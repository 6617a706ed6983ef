"""The agent registry and config resolution: slots → agents → reachable tools, validated once."""

from collections import Counter
from collections.abc import Iterator

from pydantic import BaseModel, ConfigDict, PrivateAttr

from open_agent_compiler.errors import RegistryError
from open_agent_compiler.model.hashing import digest_model
from open_agent_compiler.model.core.agent import AgentDefinition, ModelParameters
from open_agent_compiler.model.core.mock import MockProfile
from open_agent_compiler.model.core.template import PRIMARY_SLOT, CompilationConfig, TemplateTree
from open_agent_compiler.model.core.tool import ToolDefinition
from open_agent_compiler.model.names import check_postfix, check_segment


class RegisteredAgent(BaseModel):
    model_config = ConfigDict(frozen=True)

    name: str
    definition: AgentDefinition
    model_parameters: ModelParameters | None = None

    @property
    def agent_id(self) -> str:
        return self.definition.header.agent_id


class ReachableTool(BaseModel):
    """A tool and the place it was found, for messages that name both sides of a conflict."""

    model_config = ConfigDict(frozen=True)

    tool: ToolDefinition
    where: str


class ResolvedAgent(BaseModel):
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
    _digest: str | None = PrivateAttr(default=None)

    def content_digest(self) -> str:
        """Digest of this slot's whole resolved content, computed once (the model is frozen); the render memo
        and the test-key cache both start from it."""
        if self._digest is None:
            self._digest = digest_model(self)
        return self._digest

    @property
    def description(self) -> str:
        d = self.definition
        return d.header.description or d.usage_explanation_short or d.header.name


class ResolvedConfig(BaseModel):
    model_config = ConfigDict(frozen=True)

    config: CompilationConfig
    template: TemplateTree
    agents: tuple[ResolvedAgent, ...]
    mock_profiles: dict[str, MockProfile]
    _by_slot: dict[str, ResolvedAgent] | None = PrivateAttr(default=None)

    def agent(self, slot: str) -> ResolvedAgent:
        by_slot = self._by_slot
        if by_slot is None:  # built once; a private attribute may be set on a frozen model
            by_slot = self._by_slot = {agent.slot: agent for agent in self.agents}
        try:
            return by_slot[slot]
        except KeyError:
            raise RegistryError(f"config {self.config.name!r} has no slot {slot!r}") from None

    def tools(self) -> list[ReachableTool]:
        """Every reachable tool once, first place found kept."""
        seen: dict[str, ReachableTool] = {}
        for agent in self.agents:
            for reachable in agent.tools:
                seen.setdefault(reachable.tool.name, reachable)
        return list(seen.values())


def _agent_tools(slot: str, definition: AgentDefinition) -> Iterator[ReachableTool]:
    for tool in definition.extra_tools:
        yield ReachableTool(tool=tool, where=f"slot {slot!r} extra_tools")
    for skill in definition.skills:
        for step in skill.workflow_steps:
            for tool in step.tools_used:
                yield ReachableTool(tool=tool, where=f"slot {slot!r} skill {skill.name!r} step {step.header!r}")


class AgentRegistry:
    """Holds agents, templates, compilation configs and mock profiles. Names are unique per kind."""

    def __init__(self) -> None:
        self._agents: dict[str, RegisteredAgent] = {}
        self._agent_names: set[str] = set()
        self._templates: dict[str, TemplateTree] = {}
        self._configs: dict[str, CompilationConfig] = {}
        self._mock_profiles: dict[str, MockProfile] = {}

    # registration -------------------------------------------------------------------------------------------
    def register_agent(
        self, name: str, definition: AgentDefinition, model_parameters: ModelParameters | None = None
    ) -> str:
        check_segment(name, "agent name")
        agent_id = check_segment(definition.header.agent_id, "agent_id")
        if agent_id in self._agents:
            raise RegistryError(f"agent_id {agent_id!r} is already registered (as {self._agents[agent_id].name!r})")
        if name in self._agent_names:
            raise RegistryError(f"agent name {name!r} is already registered")
        self._agents[agent_id] = RegisteredAgent(name=name, definition=definition, model_parameters=model_parameters)
        self._agent_names.add(name)
        return agent_id

    def register_template(self, template: TemplateTree) -> str:
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
            if agent_id not in self._agents:
                raise RegistryError(
                    f"compilation config {config.name!r} puts unknown agent {agent_id!r} in slot {slot_name!r}"
                )
        for slot in template.slots:
            if slot.name not in config.slot_overrides and slot.default_agent_id not in self._agents:
                raise RegistryError(
                    f"template {template.name!r} slot {slot.name!r} names unknown agent {slot.default_agent_id!r}"
                )

    def register_mock_profile(self, profile: MockProfile) -> str:
        if profile.name in self._mock_profiles:
            raise RegistryError(f"mock profile {profile.name!r} is already registered")
        self._mock_profiles[profile.name] = profile
        return profile.name

    # lookups ------------------------------------------------------------------------------------------------
    def get_agent(self, agent_id: str) -> RegisteredAgent:
        try:
            return self._agents[agent_id]
        except KeyError:
            raise RegistryError(f"unknown agent {agent_id!r}; registered: {', '.join(self._agents) or 'none'}") from None

    def get_template(self, name: str) -> TemplateTree:
        try:
            return self._templates[name]
        except KeyError:
            raise RegistryError(f"unknown template {name!r}") from None

    def get_compilation_config(self, name: str) -> CompilationConfig:
        try:
            return self._configs[name]
        except KeyError:
            known = ", ".join(self._configs) or "none"
            raise RegistryError(f"unknown compilation config {name!r}; known: {known}") from None

    def get_mock_profile(self, name: str) -> MockProfile:
        try:
            return self._mock_profiles[name]
        except KeyError:
            raise RegistryError(f"unknown mock profile {name!r}") from None

    def list_agents(self) -> list[RegisteredAgent]:
        return list(self._agents.values())

    def list_templates(self) -> list[TemplateTree]:
        return list(self._templates.values())

    def list_compilation_configs(self) -> list[CompilationConfig]:
        return list(self._configs.values())

    def list_mock_profiles(self) -> list[MockProfile]:
        return list(self._mock_profiles.values())

    # resolution ---------------------------------------------------------------------------------------------
    def resolve_config(self, name: str) -> ResolvedConfig:
        """Fill every slot, compute compiled names, resolve subagent references and reachable tools.

        Raises RegistryError for an unknown config, a subagent that fills no slot (or several), and two
        different tools that share a name anywhere in the config.
        """
        config = self.get_compilation_config(name)
        template = self.get_template(config.template_name)
        postfix = check_postfix(config.postfix)
        filled = [
            (slot.name, self.get_agent(config.slot_overrides.get(slot.name, slot.default_agent_id)))
            for slot in template.slots
        ]
        slots_of: dict[str, list[str]] = {}
        for slot_name, registered in filled:
            slots_of.setdefault(registered.agent_id, []).append(slot_name)

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
            tools = list(_agent_tools(slot_name, registered.definition))
            for reachable in tools:
                first = seen_tools.setdefault(reachable.tool.name, reachable)
                if first.tool != reachable.tool:
                    raise RegistryError(
                        f"config {name!r}: two different tools are named {reachable.tool.name!r}: "
                        f"{first.where} and {reachable.where}"
                    )
            unique: list[ReachableTool] = []
            for reachable in tools:
                if all(u.tool.name != reachable.tool.name for u in unique):
                    unique.append(reachable)
            agents.append(
                ResolvedAgent(
                    slot=slot_name,
                    compiled_name=check_segment(slot_name + postfix, "compiled agent name"),
                    primary=slot_name == PRIMARY_SLOT,
                    agent_name=registered.name,
                    definition=registered.definition,
                    model_parameters=registered.model_parameters,
                    subagents=tuple(subagents),
                    tools=tuple(unique),
                )
            )
        return ResolvedConfig(
            config=config, template=template, agents=tuple(agents), mock_profiles=dict(self._mock_profiles)
        )
