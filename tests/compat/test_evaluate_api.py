"""The public package's programmatic evaluator API on our evaluators: evaluate(evaluator, RunContext(...))."""

import re
from typing import Any

import pytest

import open_agent_compiler.model.core.test_model as test_model
from open_agent_compiler.testing.evaluation import (
    EvaluationResult,
    FactRecallEvaluator,
    LLMJudgeEvaluator,
    PermissionAbsentEvaluator,
    PermissionPresentEvaluator,
    RegexEvaluator,
    RunContext,
    SubstringEvaluator,
    ToolCalledEvaluator,
    ToolCallRecord,
    evaluate,
)

FactSpec = test_model.FactSpec


def test_evaluator_classes_and_factspec_import_from_the_test_model_path() -> None:
    assert test_model.RegexEvaluator is RegexEvaluator and test_model.FactRecallEvaluator is FactRecallEvaluator
    with pytest.raises(AttributeError, match="NoSuchEvaluator"):
        test_model.NoSuchEvaluator  # noqa: B018


def test_tool_calls_and_output() -> None:
    run = RunContext(output="Order 42 shipped", tool_calls=[ToolCallRecord(name="lookup", args={"id": 42})])
    called = evaluate(ToolCalledEvaluator(tool_name="lookup", with_args_subset={"id": 42}), run)
    assert isinstance(called, EvaluationResult) and (called.passed, called.score, called.skipped) == (True, 1.0, False)
    assert "lookup" in called.evidence
    wrong_args = evaluate(ToolCalledEvaluator(tool_name="lookup", with_args_subset={"id": 7}), run)
    assert not wrong_args.passed and wrong_args.score == 0.0
    assert evaluate(SubstringEvaluator(needle="shipped", name="says shipped"), run).evaluator_name == "says shipped"


def test_fact_specs_match_any_spelling_with_their_own_case_rule() -> None:
    facts = (FactSpec(any_of=("36mg", "36 mg")), FactSpec(any_of=("Paris",), case_sensitive=True))
    evaluator = FactRecallEvaluator(facts=facts, pass_threshold=0.5)
    half = evaluate(evaluator, RunContext(output="take 36 MG daily in paris"))
    assert (half.passed, half.score) == (True, 0.5) and "Paris" in half.evidence
    full = evaluate(evaluator, RunContext(output="36mg in Paris"))
    assert (full.passed, full.score) == (True, 1.0)


def test_forbidden_case_sensitivity_is_its_own_switch() -> None:
    loose = FactRecallEvaluator(forbidden=("Aspirin",))
    strict = FactRecallEvaluator(forbidden=("Aspirin",), forbidden_case_sensitive=True)
    run = RunContext(output="no aspirin here")
    assert (evaluate(loose, run).passed, evaluate(loose, run).score) == (False, 0.0)
    assert evaluate(strict, run).passed


def test_regex_flags_are_re_flag_ints() -> None:
    assert evaluate(RegexEvaluator(pattern="^SHIPPED", flags=re.IGNORECASE | re.MULTILINE),
                    RunContext(output="order\nshipped")).passed
    assert not evaluate(RegexEvaluator(pattern="^SHIPPED"), RunContext(output="order\nshipped")).passed
    assert RegexEvaluator(pattern="x", flags=("IGNORECASE",)).flags == re.IGNORECASE


class DictJudge:
    """A judge written for the public package: positional criteria/target, a model keyword, a dict verdict."""

    def __init__(self, verdict: dict[str, Any]) -> None:
        self.verdict = verdict
        self.models: list[str | None] = []

    def judge(self, criteria: str, target: Any, *, model: str | None = None) -> dict[str, Any]:
        self.models.append(model)
        return self.verdict


def test_llm_judge_with_a_dict_verdict_and_judge_model() -> None:
    judge = DictJudge({"score": 0.9, "reasoning": "polite"})
    result = evaluate(LLMJudgeEvaluator(criteria="is polite", judge_model="small"), RunContext(output="hi", judge=judge))
    assert (result.passed, result.score) == (True, 0.9) and "polite" in result.evidence and judge.models == ["small"]
    vetoed = evaluate(LLMJudgeEvaluator(criteria="c"), RunContext(output="hi", judge=DictJudge({"score": 0.9, "pass": False})))
    assert not vetoed.passed
    skipped = evaluate(LLMJudgeEvaluator(criteria="c"), RunContext(output="hi"))
    assert (skipped.skipped, skipped.passed, skipped.score) == (True, True, 0.0) and skipped.skip_reason


def test_permission_blocks_in_the_artifact_form() -> None:
    block = {"edit": "deny", "read": True, "bash": {"git status": "allow", "*": "deny"}}
    run = RunContext(permissions=block)
    assert evaluate(PermissionPresentEvaluator(permission_key="read"), run).passed
    assert evaluate(PermissionAbsentEvaluator(permission_key="edit"), run).passed
    assert evaluate(PermissionAbsentEvaluator(permission_key="write"), run).passed
    assert evaluate(PermissionPresentEvaluator(permission_key="bash", bash_pattern="git status"), run).passed
    assert not evaluate(PermissionPresentEvaluator(permission_key="bash", bash_pattern="rm -rf /"), run).passed
    assert evaluate(PermissionPresentEvaluator(permission_key="read"), RunContext()).skipped


def test_results_built_the_reference_way_for_custom_evaluators() -> None:
    evaluator = SubstringEvaluator(needle="x", name="has x")
    skipped = EvaluationResult.skip(evaluator, "no output")
    assert (skipped.passed, skipped.skipped, skipped.score, skipped.evidence) == (True, True, 0.0, "skipped: no output")
    checked = EvaluationResult.from_check(evaluator, False, evidence="no x", details={"seen": ""})
    assert (checked.passed, checked.score, checked.evaluator_name, checked.details) == (False, 0.0, "has x", {"seen": ""})
    assert EvaluationResult.from_check(evaluator, True, score=0.25).score == 0.25
