"""equals and json_path."""

from typing import Any

import pytest

from open_agent_compiler.model.core.evaluator import EvaluationContext
from open_agent_compiler.testing.evaluation import EqualsEvaluator, JsonPathEvaluator

ORDER = {"id": 7, "items": [{"name": "apple", "qty": 2}, {"name": "pear", "qty": 1}], "paid": True, "note": None}


def on(target: Any) -> EvaluationContext:
    return EvaluationContext(target=target)


def test_equals_whole_target_pass_and_fail_with_evidence() -> None:
    ok = EqualsEvaluator(expected=ORDER).evaluate(on(dict(ORDER)))
    assert ok.passed and ok.score == 1.0 and not ok.skipped
    bad = EqualsEvaluator(expected="DEFAULT").evaluate(on("other"))
    assert not bad.passed and bad.score == 0.0
    assert '"DEFAULT"' in bad.evidence and '"other"' in bad.evidence


def test_equals_dotted_field_reaches_nested_keys_and_indices() -> None:
    assert EqualsEvaluator(field="items.1.name", expected="pear").evaluate(on(ORDER)).passed
    assert not EqualsEvaluator(field="items.1.name", expected="apple").evaluate(on(ORDER)).passed


@pytest.mark.parametrize(
    "path, segment",
    [("customer", "customer"), ("items.5.name", "5"), ("items.0.colour", "colour"), ("id.value", "value"),
     ("items.first", "first")],
)
def test_missing_segment_fails_and_names_it(path: str, segment: str) -> None:
    for evaluator in (EqualsEvaluator(field=path, expected=1), JsonPathEvaluator(path=path, expected=1)):
        result = evaluator.evaluate(on(ORDER))
        assert not result.passed and not result.skipped
        assert f"segment {segment!r}" in result.evidence


def test_none_target_is_a_value_for_equals() -> None:
    assert EqualsEvaluator(expected=None).evaluate(on(None)).passed
    result = EqualsEvaluator(expected="x").evaluate(on(None))
    assert not result.passed and not result.skipped and "null" in result.evidence
    assert not EqualsEvaluator(field="a", expected=None).evaluate(on(None)).passed


def test_present_null_field_equals_none_but_a_missing_field_does_not() -> None:
    assert EqualsEvaluator(field="note", expected=None).evaluate(on(ORDER)).passed
    assert not EqualsEvaluator(field="absent", expected=None).evaluate(on(ORDER)).passed


@pytest.mark.parametrize(
    "actual, expected, same",
    [(True, 1, False), (1, True, False), (0, False, False), (1, 1.0, True), ((1, 2), [1, 2], True),
     ({"a": [True]}, {"a": [1]}, False), ({"a": 1}, {"a": 1, "b": 2}, False), ("1", 1, False)],
)
def test_equality_has_json_semantics(actual: Any, expected: Any, same: bool) -> None:
    assert EqualsEvaluator(expected=expected).evaluate(on(actual)).passed is same


def test_json_path_pass_fail_and_evidence() -> None:
    ok = JsonPathEvaluator(path="items.0.qty", expected=2).evaluate(on(ORDER))
    assert ok.passed and "'items.0.qty'" in ok.evidence
    bad = JsonPathEvaluator(path="paid", expected=False).evaluate(on(ORDER))
    assert not bad.passed and "false" in bad.evidence and "true" in bad.evidence


def test_json_path_on_a_top_level_list_and_int_keyed_dict() -> None:
    assert JsonPathEvaluator(path="1", expected="b").evaluate(on(["a", "b"])).passed
    assert JsonPathEvaluator(path="3", expected="three").evaluate(on({3: "three"})).passed


def test_long_values_are_truncated_in_evidence() -> None:
    result = EqualsEvaluator(expected="short").evaluate(on("x" * 5000))
    assert not result.passed and len(result.evidence) < 600 and "chars)" in result.evidence
