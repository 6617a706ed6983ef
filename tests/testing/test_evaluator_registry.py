"""The kind table, dict dispatch and the public re-exports."""

import importlib

import pytest
from pydantic import ValidationError

from open_agent_compiler.model.core.evaluator import Evaluator
from open_agent_compiler.model.core.test_model import AgentTest, CapabilityTest, ToolTest, Turn
from open_agent_compiler.testing import evaluation
from open_agent_compiler.testing.evaluation import EVALUATORS

SAMPLE_FIELDS: dict[str, dict[str, object]] = {
    "equals": {"expected": 1},
    "substring": {"needle": "x"},
    "regex": {"pattern": "x+"},
    "json_path": {"path": "a.0", "expected": None},
    "tool_called": {"tool_name": "t"},
    "tool_not_called": {"tool_name": "t"},
    "path_order": {"steps": ["a", "b"]},
    "permission_present": {"permission_key": "read"},
    "permission_absent": {"bash_pattern": "rm *"},
    "llm_judge": {"criteria": "polite"},
    "fact_recall": {"facts": ["Paris"]},
}


def test_table_has_the_eleven_kinds_and_matches_the_base_registry() -> None:
    assert sorted(EVALUATORS) == sorted(SAMPLE_FIELDS)
    for kind, cls in EVALUATORS.items():
        assert cls.model_fields["kind"].default == kind
        assert Evaluator.kinds[kind] is cls


@pytest.mark.parametrize("kind", sorted(SAMPLE_FIELDS))
def test_dict_dispatch_builds_the_registered_subclass(kind: str) -> None:
    built = Evaluator.model_validate({"kind": kind, **SAMPLE_FIELDS[kind]})
    assert type(built) is EVALUATORS[kind]
    assert Evaluator.model_validate(built.model_dump()) == built


def test_unknown_kind_is_rejected_naming_it() -> None:
    with pytest.raises(ValidationError, match="nope"):
        Evaluator.model_validate({"kind": "nope"})


def test_unknown_field_is_rejected() -> None:
    with pytest.raises(ValidationError, match=r"neddle\n  Extra inputs are not permitted"):
        Evaluator.model_validate({"kind": "substring", "needle": "x", "neddle": "y"})


def test_tests_validated_from_dicts_hold_subclasses_and_round_trip_through_json() -> None:
    tool_test = ToolTest.model_validate(
        {"name": "t", "evaluators": [{"kind": "equals", "field": "a", "expected": 1}, {"kind": "regex", "pattern": "b"}]}
    )
    assert [type(e).__name__ for e in tool_test.evaluators] == ["EqualsEvaluator", "RegexEvaluator"]
    assert ToolTest.model_validate_json(tool_test.model_dump_json()) == tool_test

    agent_test = AgentTest(
        name="a", turns=(Turn(prompt="hi", evaluators=[{"kind": "tool_called", "tool_name": "x", "min_count": 2}]),)
    )
    evaluator = agent_test.turns[0].evaluators[0]
    assert type(evaluator).__name__ == "ToolCalledEvaluator" and evaluator.min_count == 2
    capability_test = CapabilityTest(name="c", evaluators=[{"kind": "permission_absent", "permission_key": "write"}])
    assert type(capability_test.evaluators[0]).__name__ == "PermissionAbsentEvaluator"


def test_evaluators_are_frozen() -> None:
    evaluator = EVALUATORS["substring"](needle="x")
    with pytest.raises(ValidationError, match="frozen"):
        evaluator.needle = "y"  # type: ignore[misc]


def test_package_root_imports_and_reexports_the_classes() -> None:
    package = importlib.import_module("open_agent_compiler")
    for cls in EVALUATORS.values():
        assert getattr(package, cls.__name__) is cls
        assert getattr(evaluation, cls.__name__) is cls


@pytest.mark.parametrize(
    "kind, fields, reason",
    [
        ("substring", {"needle": ""}, "needle\n  String should have at least 1 character"),
        ("regex", {"pattern": "("}, "regex '\\(' does not compile"),
        ("regex", {"pattern": "a", "flags": ["NOPE"]}, "unknown regex flag 'NOPE'"),
        ("json_path", {"path": "a..b", "expected": 1}, "dotted path 'a..b' has an empty segment"),
        ("equals", {"field": "", "expected": 1}, "dotted path '' has an empty segment"),
        ("equals", {}, "expected\n  Field required"),
        ("tool_called", {"tool_name": "t", "min_count": 0}, "min_count\n  Input should be greater than or equal to 1"),
        ("permission_present", {}, "permission_present needs permission_key and/or bash_pattern"),
        ("permission_absent", {}, "permission_absent needs permission_key and/or bash_pattern"),
        ("llm_judge", {"criteria": "c", "pass_threshold": 1.5}, "pass_threshold\n  Input should be less than or equal"),
        ("fact_recall", {}, "fact_recall needs at least one fact or forbidden string"),
        ("fact_recall", {"facts": [""]}, "fact_recall facts and forbidden strings must be non-empty"),
    ],
)
def test_malformed_definitions_are_rejected(kind: str, fields: dict[str, object], reason: str) -> None:
    with pytest.raises(ValidationError, match=reason):
        Evaluator.model_validate({"kind": kind, **fields})
