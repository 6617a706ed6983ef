"""`json_path`: the value at a dotted `path` (dict keys and list indices, e.g. `items.0.name`) equals `expected`."""

from typing import Literal

from pydantic import field_validator

from open_agent_compiler.model.core.evaluator import EvaluationContext, Evaluator, EvaluatorResult
from open_agent_compiler.model.hashing import AnyValue
from open_agent_compiler.testing.evaluators._compare import compare_at
from open_agent_compiler.testing.evaluators._paths import parse_path


class JsonPathEvaluator(Evaluator):
    """Like `equals` with a mandatory path. A missing segment (or a `None` target) fails and names the segment."""

    kind: Literal["json_path"] = "json_path"
    path: str
    expected: AnyValue

    @field_validator("path")
    @classmethod
    def _valid_path(cls, value: str) -> str:
        parse_path(value)
        return value

    def evaluate(self, context: EvaluationContext) -> EvaluatorResult:
        passed, evidence, details = compare_at(context.target, self.path, self.expected)
        return self.result(passed, evidence, details=details)
