"""`path_order`: `steps` occur in order among the trajectory's tool names — as a subsequence (other calls may
come between), or with `contiguous=True` as one unbroken run."""

from collections.abc import Sequence
from typing import Any, Literal

from open_agent_compiler.model.core.evaluator import EvaluationContext, Evaluator, EvaluatorResult
from open_agent_compiler.testing.evaluators._show import truncate
from open_agent_compiler.testing.evaluators.tool_called import trajectory_names


def matched_prefix(steps: Sequence[str], names: Sequence[str]) -> int:
    """How many leading `steps` occur in order in `names` (greedy; equals len(steps) for a subsequence)."""
    matched = 0
    for name in names:
        if matched < len(steps) and name == steps[matched]:
            matched += 1
    return matched


def contiguous_at(steps: Sequence[str], names: Sequence[str]) -> int | None:
    """Index where `steps` first occurs as an unbroken run of `names`, or None."""
    width = len(steps)
    for start in range(len(names) - width + 1):
        if list(names[start : start + width]) == list(steps):
            return start
    return None


class PathOrderEvaluator(Evaluator):
    """Skips when there is no trajectory. No `steps` is vacuously true. Out of order, the score is the share of
    leading steps that did occur in order (partial credit); a contiguous run is all or nothing."""

    kind: Literal["path_order"] = "path_order"
    steps: tuple[str, ...] = ()
    contiguous: bool = False

    def evaluate(self, context: EvaluationContext) -> EvaluatorResult:
        if context.trajectory is None:
            return self.skip("no trajectory recorded")
        if not self.steps:
            return self.result(True, "no steps required (vacuously true)")
        names = [call.tool_name for call in context.trajectory]
        wanted = truncate(" → ".join(self.steps))
        seen = f"trajectory: {trajectory_names(context.trajectory)}"
        matched = matched_prefix(self.steps, names)
        details: dict[str, Any] = {"chain": names, "steps": list(self.steps)}
        if self.contiguous:
            details["contiguous"] = True
            start = contiguous_at(self.steps, names)
            if start is not None:
                return self.result(True, f"contiguous run {wanted} found at call {start}; {seen}", details=details)
            note = " (it does occur with other calls in between)" if matched == len(self.steps) else ""
            return self.result(False, f"expected contiguous run {wanted}; not found{note}; {seen}", details=details)
        details["matched"] = matched
        if matched == len(self.steps):
            return self.result(True, f"steps {wanted} occur in order; {seen}", details=details)
        missing = self.steps[matched]
        after = f" after {self.steps[matched - 1]!r}" if matched else ""
        evidence = f"expected steps {wanted} in order; matched {matched}/{len(self.steps)}, no {missing!r}{after}; {seen}"
        return self.result(False, evidence, score=matched / len(self.steps), details=details)
