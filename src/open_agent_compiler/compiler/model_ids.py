"""Model ids, reasoning effort and sampling written in each harness's own form, with a warning where a value
cannot be right for a harness.

Registries name models the OpenCode way, `provider/model` (`anthropic/claude-sonnet-4-5`). Each harness wants
its own form: OpenCode and Pi `provider/model`; Claude Code an alias (`sonnet`, `opus`, `haiku`), a full
`claude-…` id or `inherit`; Codex a bare OpenAI-style id. A value that cannot be right (an OpenAI model for
Claude Code, a bare id OpenCode cannot route) is left out, so the harness uses its own default model, and the
compile says so in a warning — never a wrong value written silently, never a value dropped silently.
"""

from collections.abc import Callable
from typing import Any

from pydantic import BaseModel, ConfigDict

from open_agent_compiler.model.core.agent import ModelParameters

CLAUDE_ALIASES = ("inherit", "sonnet", "opus", "haiku", "opusplan", "default")
OPENAI_PREFIXES = ("gpt-", "o1", "o3", "o4", "codex-", "chatgpt-")

# reasoning effort → each harness's value (None: the harness has no per-agent setting)
CLAUDE_EFFORT = {"minimal": "low", "low": "low", "medium": "medium", "high": "high", "xhigh": "high", "max": "high"}
CODEX_EFFORT = {"none": "none", "minimal": "minimal", "low": "low", "medium": "medium", "high": "high",
                "xhigh": "xhigh", "max": "xhigh"}
PI_THINKING = {"none": "off", "off": "off", "minimal": "minimal", "low": "low", "medium": "medium", "high": "high",
               "xhigh": "xhigh", "max": "xhigh"}


class ModelSettings(BaseModel):
    """The frontmatter/TOML keys one agent gets for its model, and what could not be expressed."""

    model_config = ConfigDict(frozen=True)

    fields: dict[str, Any] = {}
    warnings: tuple[str, ...] = ()


def split_model(name: str) -> tuple[str | None, str]:
    """(provider, model id): `anthropic/claude-x` → ("anthropic", "claude-x"); a bare id has no provider."""
    provider, sep, model = name.strip().partition("/")
    return (provider, model) if sep and provider and model else (None, name.strip())


def _guess_provider(model: str) -> str | None:
    if model.startswith("claude-"):
        return "anthropic"
    if model.startswith(OPENAI_PREFIXES):
        return "openai"
    return None


def qualified_model(name: str) -> tuple[str | None, str | None]:
    """`provider/model` for OpenCode and Pi: (value, problem)."""
    provider, model = split_model(name)
    if provider:
        return f"{provider}/{model}", None
    guessed = _guess_provider(model)
    if guessed:
        return f"{guessed}/{model}", None
    if model in CLAUDE_ALIASES:  # known to be Claude Code's alias: no OpenCode/Pi model
        return None, f"model {name!r} names no provider (expected provider/model)"
    # An id we cannot place may be one the user's harness configuration defines: written as given (as the
    # public package does), and said.
    return model, f"model {name!r} names no provider (expected provider/model); written as given"


def claude_model(name: str) -> tuple[str | None, str | None]:
    """Claude Code: an alias or a `claude-…` id from any provider prefix (anthropic/, bedrock/ …)."""
    provider, model = split_model(name)
    if model in CLAUDE_ALIASES or model.startswith("claude-"):
        return model, None
    if provider is None and _guess_provider(model) is None:  # unknown, not known to be wrong: kept, and said
        return model, (f"model {name!r} is not a Claude model id; written as given (Claude Code runs it only "
                       "through an endpoint that serves it)")
    return None, f"model {name!r} is not a Claude model (Claude Code takes sonnet, opus, haiku, inherit or claude-…)"


def codex_model(name: str) -> tuple[str | None, str | None]:
    """Codex: the bare id; only OpenAI models (or ids with no provider) are meant for its default provider."""
    provider, model = split_model(name)
    if provider in (None, "openai") and not model.startswith("claude-") and model not in CLAUDE_ALIASES:
        return model, None
    return None, f"model {name!r} is not an OpenAI model (Codex agent files take a bare id such as gpt-5.1-codex)"


def mapped(table: dict[str, str], value: str) -> str | None:
    return table.get(value.strip().lower())


ModelForm = Callable[[str], tuple[str | None, str | None]]


class ModelSettingsBuilder:
    """Collects keys and warnings for one agent of one dialect."""

    def __init__(self, dialect: str, agent: str) -> None:
        self.where = f"{dialect}: agent {agent!r}"
        self.fields: dict[str, Any] = {}
        self.warnings: list[str] = []

    def model(self, key: str, name: str | None, form: ModelForm) -> None:
        if name is None or not name.strip():
            return
        value, problem = form(name)
        if value is not None:
            self.fields[key] = value
        if problem:
            self.warnings.append(f"{self.where}: {problem}; `{key}` left out, the harness's default model is used")

    def mapped(self, key: str | None, what: str, value: Any, table: dict[str, str] | None = None) -> None:
        """A setting with a harness key (mapped through `table` when given); `key` None: not expressible."""
        if value is None:
            return
        if key is None:
            self.warnings.append(f"{self.where}: {what} {value!r} has no per-agent setting here; left out")
            return
        if table is None:
            self.fields[key] = value
            return
        found = mapped(table, str(value))
        if found is None:
            self.warnings.append(f"{self.where}: {what} {value!r} is not one of {', '.join(sorted(set(table)))}; "
                                 "left out")
        else:
            self.fields[key] = found

    def build(self) -> ModelSettings:
        return ModelSettings(fields=self.fields, warnings=tuple(self.warnings))


def agent_model_settings(dialect: str, agent: str, parameters: ModelParameters | None, model_form: ModelForm, *,
                         effort_key: str | None, effort_table: dict[str, str] | None = None,
                         temperature_key: str | None = None) -> ModelSettings:
    """One agent's model (key `model`, in `model_form`), reasoning effort and temperature as a harness writes
    them; a key None means the harness has no per-agent setting for it: warned about, left out."""
    built = ModelSettingsBuilder(dialect, agent)
    if parameters is not None:
        built.model("model", parameters.model_name, model_form)
        built.mapped(effort_key, "reasoning effort", parameters.reasoning_effort, effort_table)
        built.mapped(temperature_key, "temperature", parameters.temperature)
    return built.build()
