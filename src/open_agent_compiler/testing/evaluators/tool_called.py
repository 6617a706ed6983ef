"""`tool_called`: the trajectory has at least `min_count` calls to `tool_name` (whose arguments include
`with_args_subset`, if given)."""

from typing import Literal

from pydantic import Field

from open_agent_compiler.model.core.evaluator import EvaluationContext, Evaluator, EvaluatorResult, ToolCall
from open_agent_compiler.model.hashing import AnyValue
from open_agent_compiler.testing.evaluators._show import show, truncate
from open_agent_compiler.testing.evaluators._values import is_subset


def trajectory_names(trajectory: tuple[ToolCall, ...]) -> str:
    """The trajectory's tool names in order, for evidence."""
    return truncate(" → ".join(call.tool_name for call in trajectory) or "(no calls)")


class ToolCalledEvaluator(Evaluator):
    """Argument matching is a deep subset: listed keys must be present and equal; nested dicts match as subsets.

    Skips when there is no trajectory (tool tests have none).
    """

    kind: Literal["tool_called"] = "tool_called"
    tool_name: str = Field(min_length=1)
    with_args_subset: dict[str, AnyValue] | None = None
    min_count: int = Field(default=1, ge=1)

    def evaluate(self, context: EvaluationContext) -> EvaluatorResult:
        if context.trajectory is None:
            return self.skip("no trajectory recorded")
        named = [call for call in context.trajectory if call.tool_name == self.tool_name]
        subset = self.with_args_subset
        matching = named if subset is None else [call for call in named if is_subset(subset, call.arguments)]
        args = "" if subset is None else f" with args ⊇ {show(subset)}"
        passed = len(matching) >= self.min_count
        evidence = (
            f"expected ≥{self.min_count} call(s) to {self.tool_name!r}{args}; found {len(matching)} matching "
            f"of {len(named)} call(s) to it; trajectory: {trajectory_names(context.trajectory)}"
        )
        return self.result(passed, evidence, details={"match_count": len(matching), "min_count": self.min_count})
