"""tool_called, tool_not_called and path_order over a recorded trajectory."""

from collections.abc import Sequence
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from open_agent_compiler.model.core.evaluator import EvaluationContext, ToolCall
from open_agent_compiler.testing.evaluation import PathOrderEvaluator, ToolCalledEvaluator, ToolNotCalledEvaluator


def trail(*calls: str | tuple[str, dict[str, Any]]) -> EvaluationContext:
    recorded = []
    for call in calls:
        name, arguments = (call, {}) if isinstance(call, str) else call
        recorded.append(ToolCall(tool_name=name, arguments=arguments))
    return EvaluationContext(trajectory=tuple(recorded))


NO_TRAJECTORY = EvaluationContext(target="final text")


@pytest.mark.parametrize(
    "evaluator",
    [ToolCalledEvaluator(tool_name="a"), ToolNotCalledEvaluator(tool_name="a"), PathOrderEvaluator(steps=("a",))],
)
def test_trajectory_checks_skip_without_a_trajectory(evaluator: Any) -> None:
    result = evaluator.evaluate(NO_TRAJECTORY)
    assert result.skipped and result.passed and "no trajectory" in result.evidence


def test_tool_called_pass_fail_and_evidence() -> None:
    ok = ToolCalledEvaluator(tool_name="search").evaluate(trail("plan", "search"))
    assert ok.passed and "plan → search" in ok.evidence
    bad = ToolCalledEvaluator(tool_name="search").evaluate(trail("plan"))
    assert not bad.passed and "found 0" in bad.evidence
    assert not ToolCalledEvaluator(tool_name="search").evaluate(trail()).passed


def test_tool_called_min_count() -> None:
    context = trail("search", "x", "search")
    assert ToolCalledEvaluator(tool_name="search", min_count=2).evaluate(context).passed
    result = ToolCalledEvaluator(tool_name="search", min_count=3).evaluate(context)
    assert not result.passed and "≥3" in result.evidence and "found 2" in result.evidence


def test_tool_called_with_args_subset() -> None:
    context = trail(
        ("search", {"q": "paris", "limit": 5, "filters": {"lang": "fr", "safe": True}}),
        ("search", {"q": "rome"}),
    )
    assert ToolCalledEvaluator(tool_name="search", with_args_subset={"q": "paris"}).evaluate(context).passed
    nested = {"filters": {"lang": "fr"}}
    assert ToolCalledEvaluator(tool_name="search", with_args_subset=nested).evaluate(context).passed
    assert not ToolCalledEvaluator(tool_name="search", with_args_subset={"q": "berlin"}).evaluate(context).passed
    assert not ToolCalledEvaluator(tool_name="search", with_args_subset={"limit": "5"}).evaluate(context).passed
    assert not ToolCalledEvaluator(tool_name="search", with_args_subset={"missing": None}).evaluate(context).passed
    counted = ToolCalledEvaluator(tool_name="search", with_args_subset={"q": "rome"}, min_count=2).evaluate(context)
    assert not counted.passed and "found 1 matching of 2" in counted.evidence


def test_tool_not_called() -> None:
    assert ToolNotCalledEvaluator(tool_name="delete").evaluate(trail("read", "write")).passed
    assert ToolNotCalledEvaluator(tool_name="delete").evaluate(trail()).passed
    bad = ToolNotCalledEvaluator(tool_name="delete").evaluate(trail("read", "delete", "delete"))
    assert not bad.passed and "found 2" in bad.evidence


def test_path_order_subsequence_versus_contiguous() -> None:
    context = trail("fetch", "log", "parse", "store")
    assert PathOrderEvaluator(steps=("fetch", "parse", "store")).evaluate(context).passed
    strict = PathOrderEvaluator(steps=("fetch", "parse", "store"), contiguous=True).evaluate(context)
    assert not strict.passed and "other calls in between" in strict.evidence
    assert PathOrderEvaluator(steps=("parse", "store"), contiguous=True).evaluate(context).passed


def test_path_order_failure_names_the_first_unmatched_step() -> None:
    result = PathOrderEvaluator(steps=("fetch", "store", "parse")).evaluate(trail("fetch", "parse", "store"))
    assert not result.passed and "no 'parse' after 'store'" in result.evidence and "matched 2/3" in result.evidence


def test_path_order_repeated_steps_need_repeated_calls() -> None:
    assert not PathOrderEvaluator(steps=("a", "a")).evaluate(trail("a", "b")).passed
    assert PathOrderEvaluator(steps=("a", "a")).evaluate(trail("a", "b", "a")).passed


def is_subsequence(steps: Sequence[str], names: Sequence[str]) -> bool:
    """Reference: is `steps` a subsequence of `names` (by exhaustive index search)."""
    if not steps:
        return True
    return any(names[i] == steps[0] and is_subsequence(steps[1:], names[i + 1 :]) for i in range(len(names)))


def is_run(steps: Sequence[str], names: Sequence[str]) -> bool:
    """Reference: is `steps` a contiguous slice of `names`."""
    joined = "\x00" + "\x00".join(names) + "\x00"
    return ("\x00" + "\x00".join(steps) + "\x00") in joined


names_strategy = st.lists(st.sampled_from("abc"), max_size=8)


@given(steps=st.lists(st.sampled_from("abc"), min_size=1, max_size=4), names=names_strategy)
def test_path_order_agrees_with_reference_implementations(steps: list[str], names: list[str]) -> None:
    context = trail(*names)
    loose = PathOrderEvaluator(steps=tuple(steps)).evaluate(context)
    strict = PathOrderEvaluator(steps=tuple(steps), contiguous=True).evaluate(context)
    assert loose.passed is is_subsequence(steps, names)
    assert strict.passed is is_run(steps, names)
    assert not strict.passed or loose.passed  # a contiguous run is always a subsequence
