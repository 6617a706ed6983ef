"""Variants: one more compilation pass over the same agents with another model preset and file-name postfix."""

from pydantic import Field, model_validator

from open_agent_compiler.model.core.agent import AgentVariant
from open_agent_compiler.model.core.base import Frozen, Text
from open_agent_compiler.model.core.model_preset import ModelPreset
from open_agent_compiler.model.hashing import AnyValue


class VariantSpec(Frozen):
    """Every agent of the pass runs on `preset` and compiles under its name + `postfix`."""

    name: str
    postfix: str = ""
    preset: ModelPreset
    extra_providers: tuple[ModelPreset, ...] = ()
    feature_flags: dict[str, AnyValue] = Field(default_factory=dict)
    description: Text = ""

    @model_validator(mode="after")
    def _named(self) -> "VariantSpec":
        if not self.name.strip():
            raise ValueError("a VariantSpec needs a non-empty name")
        return self

    def applies_to(self, variant: AgentVariant) -> bool:
        return True

    def preset_for(self, variant: AgentVariant) -> ModelPreset:
        return self.preset


def apply_variant(spec: VariantSpec, variant: AgentVariant) -> AgentVariant:
    """`variant` with the spec's model and postfix (a new value; the original is unchanged)."""
    if not spec.applies_to(variant):
        return variant
    return variant.model_copy(
        update={"model_parameters": spec.preset_for(variant).to_model_parameters(), "postfix": spec.postfix}
    )
