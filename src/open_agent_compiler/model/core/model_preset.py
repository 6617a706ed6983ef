"""Named model configurations: provider, model id, sampling, limits and reasoning, reusable across agents."""

from pydantic import Field

from open_agent_compiler.model.core.agent import ModelParameters
from open_agent_compiler.model.core.base import Frozen, Text



ReasoningField = bool | str  # reasoning on/off, or the name of the provider's field that carries it

class ModelLimits(Frozen):
    context: int | None = None
    output: int | None = None


class SamplingDefaults(Frozen):
    temperature: float | None = None
    top_p: float | None = None
    top_k: int | None = None
    min_p: float | None = None
    presence_penalty: float | None = None


class ModelPreset(Frozen):
    """`name` keys the preset in a registry; `provider` + `model_id` say which model runs.

    `provider_options` are opaque adapter settings; its `reasoning_effort` entry, when present, is the effort
    compiled agents get (else "high" when `reasoning` is on).
    """

    name: str
    provider: str
    model_id: str
    sampling: SamplingDefaults = Field(default_factory=SamplingDefaults)
    limits: ModelLimits = Field(default_factory=ModelLimits)
    reasoning: bool = False
    interleaved: ReasoningField | None = None
    input_modalities: tuple[str, ...] = ("text",)
    output_modalities: tuple[str, ...] = ("text",)
    provider_options: dict[str, str] = Field(default_factory=dict)
    description: Text = ""

    @property
    def qualified_model_name(self) -> str:
        """`provider/model_id`; `model_id` alone when it already names a provider or `provider` is empty."""
        if not self.provider or "/" in self.model_id:
            return self.model_id
        return f"{self.provider}/{self.model_id}"

    def to_model_parameters(self) -> ModelParameters:
        effort = self.provider_options.get("reasoning_effort") or ("high" if self.reasoning else None)
        return ModelParameters(
            model_name=self.qualified_model_name, temperature=self.sampling.temperature, reasoning_effort=effort
        )
