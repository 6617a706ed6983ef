"""substring, regex and fact_recall: text checks over strings or JSON-rendered targets."""

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from open_agent_compiler.model.core.evaluator import EvaluationContext
from open_agent_compiler.testing.evaluation import FactRecallEvaluator, RegexEvaluator, SubstringEvaluator


def on(target: Any) -> EvaluationContext:
    return EvaluationContext(target=target)


def test_substring_pass_fail_and_evidence() -> None:
    ok = SubstringEvaluator(needle="CI-MOCK").evaluate(on("reply: CI-MOCK done"))
    assert ok.passed and ok.score == 1.0 and "CI-MOCK" in ok.evidence
    bad = SubstringEvaluator(needle="CI-MOCK").evaluate(on("reply: DEFAULT"))
    assert not bad.passed and bad.score == 0.0 and "not found" in bad.evidence and "DEFAULT" in bad.evidence


def test_substring_case_toggle() -> None:
    assert not SubstringEvaluator(needle="hello").evaluate(on("HELLO world")).passed
    assert SubstringEvaluator(needle="hello", case_sensitive=False).evaluate(on("HELLO world")).passed


def test_text_checks_search_non_string_targets_as_sorted_json() -> None:
    target = {"b": "café", "a": [1, True]}
    assert SubstringEvaluator(needle='"a": [1, true], "b"').evaluate(on(target)).passed
    assert SubstringEvaluator(needle="café").evaluate(on(target)).passed
    assert SubstringEvaluator(needle="42").evaluate(on(42)).passed
    assert RegexEvaluator(pattern=r'"b": "caf.?"').evaluate(on(target)).passed
    assert FactRecallEvaluator(facts=("café",)).evaluate(on(target)).passed


def test_text_checks_skip_without_a_target() -> None:
    for evaluator in (SubstringEvaluator(needle="x"), RegexEvaluator(pattern="x"), FactRecallEvaluator(facts=("x",))):
        result = evaluator.evaluate(on(None))
        assert result.skipped and result.passed and "no target" in result.evidence


def test_empty_string_target_is_searched_not_skipped() -> None:
    result = SubstringEvaluator(needle="x").evaluate(on(""))
    assert not result.skipped and not result.passed


def test_regex_pass_fail_flags_and_evidence() -> None:
    ok = RegexEvaluator(pattern=r"order #(\d+)").evaluate(on("your order #123 shipped"))
    assert ok.passed and '"order #123"' in ok.evidence
    assert not RegexEvaluator(pattern=r"^shipped").evaluate(on("your order\nshipped")).passed
    assert RegexEvaluator(pattern=r"^shipped", flags=("MULTILINE",)).evaluate(on("your order\nshipped")).passed
    assert RegexEvaluator(pattern="SHIPPED", flags=("IGNORECASE",)).evaluate(on("shipped")).passed
    bad = RegexEvaluator(pattern=r"\d{4}").evaluate(on("no digits"))
    assert not bad.passed and "no match" in bad.evidence


def test_fact_recall_is_graded_and_names_missing_facts() -> None:
    evaluator = FactRecallEvaluator(facts=("Paris", "Seine", "Louvre"), pass_threshold=0.6)
    result = evaluator.evaluate(on("paris sits on the Seine."))
    assert result.score == 2 / 3 and result.passed
    assert '"Louvre"' in result.evidence and "2/3" in result.evidence
    strict = FactRecallEvaluator(facts=("Paris", "Seine", "Louvre")).evaluate(on("Paris, Seine"))
    assert not strict.passed and strict.score == 2 / 3


def test_fact_recall_case_sensitivity_toggle() -> None:
    assert FactRecallEvaluator(facts=("Paris",)).evaluate(on("PARIS")).passed
    assert not FactRecallEvaluator(facts=("Paris",), case_sensitive=True).evaluate(on("PARIS")).passed


def test_forbidden_string_zeroes_the_score_and_fails() -> None:
    evaluator = FactRecallEvaluator(facts=("Paris",), forbidden=("Berlin",), pass_threshold=0.0)
    result = evaluator.evaluate(on("Paris, not Berlin"))
    assert result.score == 0.0 and not result.passed and '"Berlin"' in result.evidence
    clean = evaluator.evaluate(on("Paris"))
    assert clean.passed and clean.score == 1.0


def test_forbidden_only_checks() -> None:
    evaluator = FactRecallEvaluator(forbidden=("password",))
    assert evaluator.evaluate(on("all good")).passed
    assert not evaluator.evaluate(on("the PASSWORD is x")).passed


words = st.text(alphabet="abcdefgh", min_size=1, max_size=4)


@given(facts=st.lists(words, min_size=1, max_size=6), text=st.text(alphabet="abcdefgh ", max_size=40))
def test_fact_recall_score_is_the_fraction_recalled(facts: list[str], text: str) -> None:
    result = FactRecallEvaluator(facts=tuple(facts), pass_threshold=0.0).evaluate(on(text))
    expected = sum(1 for fact in facts if fact in text) / len(facts)
    assert result.score == expected
    assert 0.0 <= result.score <= 1.0 and result.passed


@given(facts=st.lists(words, min_size=1, max_size=6), text=st.text(alphabet="abcdefgh ", max_size=40),
       threshold=st.floats(min_value=0.0, max_value=1.0))
def test_fact_recall_passes_exactly_when_the_fraction_reaches_the_threshold(
    facts: list[str], text: str, threshold: float
) -> None:
    result = FactRecallEvaluator(facts=tuple(facts), pass_threshold=threshold).evaluate(on(text))
    fraction = sum(1 for fact in facts if fact in text) / len(facts)
    assert result.passed is (fraction >= threshold - 1e-9)
