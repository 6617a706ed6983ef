"""`tool_not_called`: the trajectory has no call to `tool_name`."""

from typing import Literal

from pydantic import Field

from open_agent_compiler.model.core.evaluator import EvaluationContext, Evaluator, EvaluatorResult
from open_agent_compiler.testing.evaluators.tool_called import trajectory_names


class ToolNotCalledEvaluator(Evaluator):
    """Skips when there is no trajectory; an empty trajectory passes."""

    kind: Literal["tool_not_called"] = "tool_not_called"
    tool_name: str = Field(min_length=1)

    def evaluate(self, context: EvaluationContext) -> EvaluatorResult:
        if context.trajectory is None:
            return self.skip("no trajectory recorded")
        count = sum(1 for call in context.trajectory if call.tool_name == self.tool_name)
        evidence = (
            f"expected no call to {self.tool_name!r}; found {count}; "
            f"trajectory: {trajectory_names(context.trajectory)}"
        )
        return self.result(count == 0, evidence, details={"match_count": count})
