"""The improvement loop's optimisation criteria as data, at 1.16.5's module path, so registries that declare them
(next to their agents) import. oac does not run the loop (see `improvement.out_of_scope`); these are values only.

A `Criterion` names one metric (`kind`, optionally narrowed by `scope`/`scope_value`) and its `target`; an
`OptimisationCriterion` groups criteria (`all` must hold, or a `weighted` score)."""

from typing import Literal, get_args

from pydantic import model_validator

from open_agent_compiler.model.core.base import Frozen

CriterionKind = Literal["pass_rate", "score_floor", "score_mean", "score_quantile", "latency_p95", "cost_ceiling",
                        "determinism", "tool_failure_rate"]
CriterionScope = Literal["any", "capability_tests", "tool_tests", "agent_tests", "by_evaluator", "by_name"]
CRITERION_KINDS: tuple[str, ...] = get_args(CriterionKind)


class Criterion(Frozen):
    name: str = ""
    kind: CriterionKind
    target: float
    scope: CriterionScope = "any"
    scope_value: str = ""
    weight: float = 1.0
    hard: bool = False

    @classmethod
    def for_named(cls, name: str, kind: CriterionKind, target: float, *, weight: float = 1.0,
                  hard: bool = False) -> "Criterion":
        """A criterion on the tests named `name` (scope `by_name`)."""
        return cls(name=name, kind=kind, target=target, scope="by_name", scope_value=name, weight=weight, hard=hard)


class OptimisationCriterion(Frozen):
    name: str
    aggregation: Literal["all", "weighted"] = "all"
    criteria: tuple[Criterion, ...]
    description: str = ""

    @model_validator(mode="after")
    def _has_criteria(self) -> "OptimisationCriterion":
        if not self.criteria:
            raise ValueError(f"OptimisationCriterion {self.name!r} needs at least one criterion")
        return self


def metric_key(criterion: Criterion) -> str:
    """The metrics key a criterion reads: its kind, then its scope and scope value when narrowed."""
    parts = [criterion.kind]
    if criterion.scope != "any":
        parts.append(criterion.scope)
        if criterion.scope_value:
            parts.append(criterion.scope_value)
    return ":".join(parts)
