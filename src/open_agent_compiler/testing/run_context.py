"""The public package's programmatic evaluator interface, as data: what a run produced (`RunContext` with its
`ToolCallRecord`s) and what one evaluator concluded (`EvaluationResult`). `testing.evaluation.evaluate` runs an
evaluator on them through our evaluators, translating both ways here."""

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from open_agent_compiler.model.core.capabilities import Action, Capabilities
from open_agent_compiler.model.core.evaluator import EvaluationContext, Evaluator, EvaluatorResult, ToolCall


class ToolCallRecord(BaseModel):
    """One tool call a run made; `error` says why it was refused or failed (None: it ran)."""

    name: str
    args: dict[str, Any] = Field(default_factory=dict)
    output: Any = None
    error: str | None = None


class RunContext(BaseModel):
    """What evaluators may look at; every part optional. `permissions` is an artifact's permission block:
    key -> "allow"/"ask"/"deny" or a bool, and "bash" -> {pattern: action}."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    output: Any = None
    tool_calls: list[ToolCallRecord] = Field(default_factory=list)
    permissions: dict[str, Any] | None = None
    judge: Any = None
    extras: dict[str, Any] = Field(default_factory=dict)

    def evaluation_context(self) -> EvaluationContext:
        trajectory = tuple(ToolCall(tool_name=c.name, arguments=c.args, output=c.output) for c in self.tool_calls)
        permissions = _capabilities(self.permissions) if self.permissions is not None else None
        return EvaluationContext(target=self.output, trajectory=trajectory, permissions=permissions, judge=self.judge)


def _action(value: Any) -> Action | None:
    if isinstance(value, bool):
        return "allow" if value else "deny"
    if value in ("allow", "ask", "deny"):
        return value  # type: ignore[no-any-return]
    if isinstance(value, Mapping):  # a per-item block (e.g. mcp servers) counts as granted, as there
        return "allow"
    return None


def _capabilities(block: Mapping[str, Any]) -> Capabilities:
    bash: dict[str, Action] = {}
    permissions: dict[str, Action] = {}
    for key, value in block.items():
        if key == "bash" and isinstance(value, Mapping):
            bash = {str(p): a for p, a in ((p, _action(v)) for p, v in value.items()) if a is not None}
            if "*" in bash:  # a block names specific patterns as exceptions to its catch-all: catch-all first
                bash = {"*": bash.pop("*"), **bash}
            permissions["bash"] = "allow" if "allow" in bash.values() else "deny"
            continue
        action = _action(value)
        if action is not None:
            permissions[str(key)] = action
            if key == "bash":
                bash["*"] = action
    return Capabilities(agent="", dialect="", bash=bash, permissions=permissions)


class EvaluationResult(BaseModel):
    """One evaluator's conclusion: `passed`, `score` in [0, 1], `evidence`; a skip passes with score 0 and says
    why in `skip_reason`."""

    evaluator_kind: str
    evaluator_name: str = ""
    passed: bool
    score: float = 1.0
    evidence: str = ""
    details: dict[str, Any] = Field(default_factory=dict)
    skipped: bool = False
    skip_reason: str = ""

    @classmethod
    def skip(cls, evaluator: Evaluator, reason: str) -> "EvaluationResult":
        return cls(evaluator_kind=evaluator.kind, evaluator_name=evaluator.name or "", passed=True, score=0.0,
                   skipped=True, skip_reason=reason, evidence=f"skipped: {reason}")

    @classmethod
    def from_check(cls, evaluator: Evaluator, passed: bool, *, evidence: str = "", score: float | None = None,
                   details: dict[str, Any] | None = None) -> "EvaluationResult":
        return cls(evaluator_kind=evaluator.kind, evaluator_name=evaluator.name or "", passed=passed,
                   score=(1.0 if passed else 0.0) if score is None else score, evidence=evidence,
                   details=details or {})

    @classmethod
    def of(cls, result: EvaluatorResult, name: str) -> "EvaluationResult":
        return cls(
            evaluator_kind=result.evaluator_kind,
            evaluator_name=name,
            passed=result.passed,
            score=result.score,
            evidence=f"skipped: {result.evidence}" if result.skipped else result.evidence,
            details=dict(result.details),
            skipped=result.skipped,
            skip_reason=result.evidence if result.skipped else "",
        )
