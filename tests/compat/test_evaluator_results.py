"""Evaluator results and API as a 1.16.5 user reads them: `details`, partial credit, StubJudge(responses=…),
and what a callable mock receives. Also the mutation survivors of the evaluators (each test here failed on a
broken evaluator)."""

from pathlib import Path

import pytest
from pydantic import ValidationError

from open_agent_compiler.model.core.mock import MockResponse
from open_agent_compiler.model.core.test_model import FactSpec
from open_agent_compiler.testing.evaluation import (
    FactRecallEvaluator,
    LLMJudgeEvaluator,
    PathOrderEvaluator,
    RunContext,
    ToolCallRecord,
    ToolNotCalledEvaluator,
    evaluate,
)
from open_agent_compiler.testing.judges import StubJudge
from open_agent_compiler.testing.mocks import MockSession


def calls(*names: str) -> list[ToolCallRecord]:
    return [ToolCallRecord(name=name) for name in names]


def test_fact_recall_details_name_what_was_recalled_missing_and_fabricated() -> None:
    facts = (FactSpec(any_of=("36mg", "36 mg")), FactSpec(any_of=("Paris",)))
    half = evaluate(FactRecallEvaluator(facts=facts, pass_threshold=0.5), RunContext(output="take 36 mg"))
    assert half.details == {"recalled": ["36 mg"], "missing": ["Paris"]} and half.passed
    made_up = evaluate(FactRecallEvaluator(facts=facts, forbidden=("aspirin",)), RunContext(output="36mg, Aspirin"))
    assert made_up.details == {"fabricated": ["aspirin"]} and (made_up.passed, made_up.score) == (False, 0.0)


def test_fact_recall_searches_a_non_string_output_as_text() -> None:
    evaluator = FactRecallEvaluator(facts=(FactSpec(any_of=("shipped",)), FactSpec(any_of=("42",))))
    result = evaluate(evaluator, RunContext(output={"status": "shipped", "order": 42}))
    assert (result.passed, result.score, result.details["recalled"]) == (True, 1.0, ["shipped", "42"])
    assert evaluate(FactRecallEvaluator(facts=(FactSpec(any_of=("42",)),)), RunContext(output=42)).passed


def test_fact_recall_forbidden_matching_honours_case_sensitive() -> None:
    run = RunContext(output="no aspirin here")
    assert not evaluate(FactRecallEvaluator(forbidden=("Aspirin",)), run).passed
    assert evaluate(FactRecallEvaluator(forbidden=("Aspirin",), case_sensitive=True), run).passed
    assert not evaluate(FactRecallEvaluator(forbidden=("aspirin",), case_sensitive=True), run).passed


def test_path_order_gives_partial_credit_and_empty_steps_are_vacuously_true() -> None:
    evaluator = PathOrderEvaluator(steps=("search", "read", "answer"))
    partial = evaluate(evaluator, RunContext(tool_calls=calls("search", "read")))
    assert not partial.passed and abs(partial.score - 2 / 3) < 1e-9
    assert partial.details == {"chain": ["search", "read"], "steps": ["search", "read", "answer"], "matched": 2}
    reversed_ = evaluate(evaluator, RunContext(tool_calls=calls("answer", "read", "search")))
    assert not reversed_.passed and 0 < reversed_.score < 1
    assert evaluate(evaluator, RunContext(tool_calls=calls("other"))).score == 0.0
    vacuous = evaluate(PathOrderEvaluator(steps=()), RunContext(tool_calls=calls("x")))
    assert (vacuous.passed, vacuous.score, vacuous.skipped) == (True, 1.0, False)
    contiguous = evaluate(PathOrderEvaluator(steps=("a", "b"), contiguous=True), RunContext(tool_calls=calls("a", "x", "b")))
    assert (contiguous.passed, contiguous.score) == (False, 0.0)


def test_tool_not_called_passes_on_an_empty_trajectory_without_skipping() -> None:
    result = evaluate(ToolNotCalledEvaluator(tool_name="rm"), RunContext(tool_calls=[]))
    assert (result.passed, result.skipped, result.score, result.details) == (True, False, 1.0, {"match_count": 0})
    hit = evaluate(ToolNotCalledEvaluator(tool_name="rm"), RunContext(tool_calls=calls("ls", "rm")))
    assert (hit.passed, hit.details) == (False, {"match_count": 1})


def test_stub_judge_answers_by_criteria_from_responses() -> None:
    judge = StubJudge(responses={"is polite": {"pass": False, "score": 0.2, "reasoning": "curt"}})
    assert judge.judge("is polite", "hi") == {"pass": False, "score": 0.2, "reasoning": "curt"}
    assert judge.judge("other", "hi")["score"] == 1.0  # the default verdict
    result = evaluate(LLMJudgeEvaluator(criteria="is polite"), RunContext(output="hi", judge=judge))
    assert (result.passed, result.score) == (False, 0.2)
    assert set(result.details) == {"criteria", "pass_threshold", "judge_response"}
    assert [call["criteria"] for call in judge.calls] == ["is polite", "other", "is polite"]


def test_a_callable_mock_receives_the_input_as_a_pydantic_model(tmp_path: Path) -> None:
    (tmp_path / "public_style_mock.py").write_text(
        "from pydantic import BaseModel\n\n"
        "def lookup(args):\n"
        "    assert isinstance(args, BaseModel)\n"
        "    return {'query': args.query.upper(), 'also': args['query'], 'keys': sorted(dict(args))}\n\n"
        "def count(args, state):\n"
        "    state.scratchpad['seen'] = state.scratchpad.get('seen', 0) + 1\n"
        "    return {'n': state.scratchpad['seen'], 'query': args.query}\n")
    session = MockSession(project_root=tmp_path)
    payload = {"query": "tea", "limit": 2}
    answer = session.call("search", MockResponse(kind="callable", callable_spec="public_style_mock:lookup"), payload)
    assert answer == {"query": "TEA", "also": "tea", "keys": ["limit", "query"]}
    stateful = MockResponse(kind="stateful_callable", callable_spec="public_style_mock:count")
    assert session.call("search", stateful, payload) == {"n": 1, "query": "tea"}
    assert payload == {"query": "tea", "limit": 2}


def test_a_callable_mock_annotated_with_the_tools_input_model_receives_that_model(tmp_path: Path) -> None:
    (tmp_path / "typed_mock.py").write_text(
        "from pydantic import BaseModel, ConfigDict\n\n"
        "class SearchInput(BaseModel):\n"
        "    model_config = ConfigDict(extra='forbid')\n"
        "    query: str\n"
        "    limit: int = 5\n\n"
        "def lookup(args: SearchInput) -> dict:\n"
        "    assert type(args) is SearchInput\n"
        "    return {'query': args.query, 'limit': args.limit}\n")
    session = MockSession(project_root=tmp_path)
    response = MockResponse(kind="callable", callable_spec="typed_mock:lookup")
    assert session.call("search", response, {"query": "tea"}) == {"query": "tea", "limit": 5}
    with pytest.raises(ValidationError, match="unknown"):  # an input the tool's model rejects fails the call
        session.call("search", response, {"query": "tea", "unknown": 1})
