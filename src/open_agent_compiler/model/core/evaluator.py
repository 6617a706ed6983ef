"""The data side of evaluators: the spec base class, the context they read and the result they return.

Concrete kinds live in `open_agent_compiler.testing.evaluators`, one module each, and register themselves by
`kind` when defined; `testing.evaluation` imports them all and holds the table.
"""

from typing import Any, ClassVar, Protocol

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from open_agent_compiler.model.core.base import SharedFieldsSet
from open_agent_compiler.model.core.capabilities import Capabilities
from open_agent_compiler.model.digest_coverage import unmarked_positions


class FactSpec(BaseModel):
    """One fact a `fact_recall` evaluator looks for: recalled when any of its spellings (`any_of`) appears."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    any_of: tuple[str, ...] = Field(min_length=1)
    case_sensitive: bool = False

    @field_validator("any_of")
    @classmethod
    def _non_empty(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        if any(not alias for alias in value):
            raise ValueError("a fact's spellings must be non-empty")
        return value


class JudgeVerdict(BaseModel):
    model_config = ConfigDict(frozen=True, defer_build=True)  # warm runs use none

    score: float
    reasoning: str = ""


class JudgeClient(Protocol):
    """Pluggable LLM judge for `llm_judge` evaluators."""

    def judge(self, *, criteria: str, target: Any) -> JudgeVerdict: ...


class ToolCall(BaseModel):
    """One tool call recorded in a trajectory."""

    model_config = ConfigDict(frozen=True, defer_build=True)  # warm runs use none

    tool_name: str
    arguments: dict[str, Any] = {}
    output: Any = None
    error: str | None = None  # the call failed (an agent sees the error instead of an output)


class EvaluationContext(BaseModel):
    """What an evaluator may look at. A missing piece (None) makes evaluators that need it skip."""

    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True, defer_build=True)  # warm runs use none

    target: Any = None  # tool output, or the agent's final text for a turn
    trajectory: tuple[ToolCall, ...] | None = None
    permissions: Capabilities | None = None  # read back from the compiled artifact
    judge: Any = None  # a JudgeClient


class EvaluatorResult(BaseModel):
    model_config = ConfigDict(frozen=True)

    evaluator_kind: str
    name: str
    passed: bool
    score: float
    skipped: bool = False
    evidence: str = ""
    # Structured facts behind the verdict, keyed as the public package keys them (`recalled`, `matched`, ...).
    # Read through the programmatic API (`EvaluationResult.details`); not written to the JSONL records.
    details: dict[str, Any] = Field(default_factory=dict, exclude=True)


_BLURRED_BY_JSON: list[type["Evaluator"]] = []  # evaluator classes with a position JSON blurs and nothing tags


def json_digest_is_faithful() -> bool:
    """Whether every evaluator class defined so far writes JSON that keeps what its Python dump keeps apart."""
    return not _BLURRED_BY_JSON


class Evaluator(SharedFieldsSet):
    """Base of every evaluator spec. Subclasses set `kind: Literal[...]` and implement `evaluate`."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    kinds: ClassVar[dict[str, type["Evaluator"]]] = {}
    kind: str
    name: str | None = ""

    @classmethod
    def __pydantic_init_subclass__(cls, **kwargs: Any) -> None:
        # A test's evaluators are written by their own classes (SerializeAsAny): one defined outside this package
        # with a position JSON could blur (an `Any` field) makes content digests take the pickled form
        # (ours are held to none by tests/model/test_digest_coverage.py).
        if not cls.__module__.startswith("open_agent_compiler."):
            try:
                blurred = bool(unmarked_positions(cls))
            except Exception:  # noqa: BLE001 - an annotation the walk does not know: assume the worst
                blurred = True
            if blurred:
                _BLURRED_BY_JSON.append(cls)
        default = cls.model_fields["kind"].default
        if isinstance(default, str) and default:
            existing = Evaluator.kinds.get(default)
            if existing is not None and existing.__qualname__ != cls.__qualname__:
                raise TypeError(f"evaluator kind {default!r} is defined twice: {existing} and {cls}")
            Evaluator.kinds[default] = cls

    @model_validator(mode="wrap")
    @classmethod
    def _dispatch_on_kind(cls, value: Any, handler: Any) -> Any:
        # Plain dicts (e.g. from JSON) become the registered subclass named by their `kind`.
        if cls is Evaluator and isinstance(value, dict):
            kind = value.get("kind")
            subclass = Evaluator.kinds.get(kind) if isinstance(kind, str) else None
            if subclass is None:
                # The built-in kinds register when their modules are imported; the package imports each when it is
                # named, so a dict may arrive before its kind's class was (explicit seam, not a cycle).
                import open_agent_compiler.testing.evaluation  # noqa: F401

                subclass = Evaluator.kinds.get(kind)
            if subclass is None:
                raise ValueError(f"unknown evaluator kind {kind!r}; known: {sorted(Evaluator.kinds)}")
            return subclass.model_validate(value)
        return handler(value)

    @property
    def label(self) -> str:
        return self.name or self.kind

    def evaluate(self, context: EvaluationContext) -> EvaluatorResult:
        raise NotImplementedError

    # helpers for subclasses
    def result(self, passed: bool, evidence: str, score: float | None = None,
               details: dict[str, Any] | None = None) -> EvaluatorResult:
        return EvaluatorResult(
            evaluator_kind=self.kind,
            name=self.label,
            passed=passed,
            score=(1.0 if passed else 0.0) if score is None else score,
            evidence=evidence,
            details=details or {},
        )

    def skip(self, why: str) -> EvaluatorResult:
        return EvaluatorResult(
            evaluator_kind=self.kind, name=self.label, passed=True, score=0.0, skipped=True, evidence=why
        )
