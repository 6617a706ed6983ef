"""Templates map slots to agents; a compilation config picks a template, a postfix and slot overrides."""

from pydantic import Field

from open_agent_compiler.model.core.base import Frozen, Text, empty_list

PRIMARY_SLOT = "primary"


class TemplateSlot(Frozen):
    name: str
    default_agent_id: str
    also_compile_as_primary: bool = False  # a non-primary slot is also compiled as a primary "<name>-primary"


class TemplateTree(Frozen):
    name: str
    description: Text = ""
    slots: list[TemplateSlot] = Field(default_factory=empty_list)


class CompilationConfig(Frozen):
    """`slot_overrides` maps a slot name to the agent_id that fills it instead of the slot's default."""

    name: str
    template_name: str
    postfix: str = ""
    slot_overrides: dict[str, str] = Field(default_factory=dict)
    strict_validation: bool = True  # False: unknown templates/agents are reported when resolved, not registered
