"""A variant whose model depends on each agent's `model_class` (e.g. fast agents on one model, analytical ones on
another), in one compilation pass."""

from pydantic import Field, model_validator

from open_agent_compiler.model.core.agent import AgentVariant
from open_agent_compiler.model.core.model_preset import ModelPreset
from open_agent_compiler.model.core.variant_spec import VariantSpec


class SplitProfile(VariantSpec):
    """`class_map` routes a model class to its preset; an unmapped class takes `default_class`'s preset, else
    `preset`. Agents of a `passthrough_classes` class keep their own model (by default: vision agents)."""

    class_map: dict[str, ModelPreset] = Field(default_factory=dict)
    default_class: str = "default"
    passthrough_classes: tuple[str, ...] = ("vision",)

    @model_validator(mode="after")
    def _maps_something(self) -> "SplitProfile":
        if not self.class_map:
            raise ValueError("a SplitProfile needs at least one class_map entry (else use VariantSpec)")
        return self

    def applies_to(self, variant: AgentVariant) -> bool:
        return variant.agent_definition.model_class not in self.passthrough_classes

    def preset_for(self, variant: AgentVariant) -> ModelPreset:
        model_class = variant.agent_definition.model_class
        return self.class_map.get(model_class) or self.class_map.get(self.default_class) or self.preset
