"""`equals`: the whole target, or a dotted `field` of it, equals `expected`."""

from typing import Literal

from pydantic import field_validator

from open_agent_compiler.model.core.evaluator import EvaluationContext, Evaluator, EvaluatorResult
from open_agent_compiler.model.hashing import AnyValue
from open_agent_compiler.testing.evaluators._compare import compare_at
from open_agent_compiler.testing.evaluators._paths import parse_path


class EqualsEvaluator(Evaluator):
    """Equality with JSON semantics (`True != 1`, `1 == 1.0`, tuples equal lists).

    Never skips: a `None` target is compared as a value, so `expected=None` passes on a tool that returned
    nothing. A `field` whose segment does not exist fails and names the segment.
    """

    kind: Literal["equals"] = "equals"
    expected: AnyValue
    field: str | None = None

    @field_validator("field")
    @classmethod
    def _valid_path(cls, value: str | None) -> str | None:
        if value is not None:
            parse_path(value)
        return value

    def evaluate(self, context: EvaluationContext) -> EvaluatorResult:
        passed, evidence, details = compare_at(context.target, self.field, self.expected)
        return self.result(passed, evidence, details=details)
