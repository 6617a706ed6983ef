"""Every position of a resolved agent that JSON could blur is tagged in its content digest (model/hashing.py,
`digest_model_json`): a field added later without `AnyValue`/`FAITHFUL` fails here instead of silently letting
two different contents share a digest (and a green skip)."""

import importlib
import math
import pkgutil
import typing
from typing import Any, Literal

import pytest
from pydantic import BaseModel, Field

import open_agent_compiler.model as model_package
import open_agent_compiler.testing.evaluation  # noqa: F401  (registers every built-in evaluator kind)
import open_agent_compiler.testing.evaluators as evaluator_package
from open_agent_compiler.model.core import evaluator as evaluator_module
from open_agent_compiler.model.core.evaluator import Evaluator, json_digest_is_faithful
from open_agent_compiler.model.digest_coverage import unmarked_positions
from open_agent_compiler.model.registry import ResolvedAgent, ResolvedConfig

# Models of model/ and testing/evaluators/ that are runtime values, never part of a resolved agent or config (so
# never digested as JSON), each with why.
RUNTIME_ONLY = {
    "JudgeVerdict": "a judge's answer during a run",
    "ToolCall": "a call recorded in a trajectory during a run",
    "EvaluationContext": "what an evaluator reads during a run",
    "EvaluatorResult": "an evaluator's verdict",
    "MockInput": "a mock's call arguments during a run",
    "MockState": "a stateful mock's per-test state",
    "PathLookup": "an evaluator's path lookup result",
    "SamplingDefaults": "a preset's sampling, resolved into ModelParameters before an agent exists",
    "ModelPreset": "resolved into ModelParameters before an agent exists",
    "SplitProfile": "resolved before an agent exists",
    "VariantSpec": "resolved before an agent exists",
}


def test_every_position_a_resolved_agent_or_config_reaches_is_tagged_or_typed() -> None:
    seen: set[type] = set()
    found = unmarked_positions(ResolvedAgent, seen) + unmarked_positions(ResolvedConfig, seen)
    for kind in Evaluator.kinds.values():  # a test's evaluators are written by their own classes
        found += unmarked_positions(kind, seen)
    assert found == []
    assert len(seen) > 40  # the walk went through the whole tree (tools, skills, tests, mocks, evaluators)


def _package_models() -> list[type[BaseModel]]:
    models = []
    for package in (model_package, evaluator_package):
        for info in pkgutil.walk_packages(package.__path__, package.__name__ + "."):
            module = importlib.import_module(info.name)
            models += [value for value in vars(module).values() if isinstance(value, type)
                       and issubclass(value, BaseModel) and value.__module__ == module.__name__]
    return models


def test_every_model_with_an_untagged_position_is_a_runtime_value() -> None:
    reachable: set[type] = set()
    unmarked_positions(ResolvedAgent, reachable)
    unmarked_positions(ResolvedConfig, reachable)
    blurred = {model.__qualname__ for model in _package_models() if unmarked_positions(model)}
    assert blurred <= set(RUNTIME_ONLY), blurred - set(RUNTIME_ONLY)
    assert not {model.__qualname__ for model in reachable} & set(RUNTIME_ONLY)


class _Blurs(BaseModel):
    any_value: Any = None
    bare: dict = Field(default_factory=dict)
    nested: list[dict[str, Any]] = Field(default_factory=list)
    ratio: float = 0.0
    maybe: float | None = None
    bounded: float = Field(default=0.5, ge=0, le=1)
    either: list[int] | tuple[int, ...] = ()
    tags: set[str] = Field(default_factory=set)
    by_number: dict[int, str] = Field(default_factory=dict)
    fine: tuple[str, ...] = ()
    kind: Literal["a", "b"] = "a"
    old_dict: typing.Dict = Field(default_factory=dict)  # noqa: UP006  (what older code writes)
    old_list: typing.List = Field(default_factory=list)  # noqa: UP006


def test_the_walk_names_each_kind_of_blur() -> None:
    named = {entry.split(":")[0].split("[")[0] for entry in unmarked_positions(_Blurs)}
    assert named == {f"_Blurs.{name}" for name in (
        "any_value", "bare", "nested", "ratio", "maybe", "either", "tags", "by_number", "old_dict", "old_list")}


def test_a_user_evaluator_with_an_any_field_makes_digests_take_the_pickled_form(monkeypatch: pytest.MonkeyPatch) -> None:
    from digest_agents import agent_with

    monkeypatch.setattr(evaluator_module, "_BLURRED_BY_JSON", [])
    monkeypatch.setattr(Evaluator, "kinds", dict(Evaluator.kinds))
    assert json_digest_is_faithful()

    class Tight(Evaluator):  # a user's evaluator whose types fix what JSON writes
        kind: Literal["tight-test"] = "tight-test"
        threshold: int = 1
        names: tuple[str, ...] = ()

    assert json_digest_is_faithful()

    class Loose(Evaluator):  # a user's evaluator: its `Any` is not ours to mark
        kind: Literal["loose-test"] = "loose-test"
        wanted: Any = None

    assert not json_digest_is_faithful()
    as_tuple = agent_with(evaluators=[Loose(wanted=(1, 2))]).content_digest()
    as_list = agent_with(evaluators=[Loose(wanted=[1, 2])]).content_digest()
    assert as_tuple != as_list


def test_nan_and_inf_floats_of_typed_fields_are_kept_apart() -> None:
    from digest_agents import agent_with

    temperatures = [agent_with(temperature=t).content_digest() for t in (None, math.nan, math.inf, -math.inf, 0.0,
                                                                            -0.0)]
    assert len(set(temperatures)) == len(temperatures)
    timeouts = [agent_with(timeout_s=t).content_digest() for t in (math.nan, math.inf, -math.inf, 60.0)]
    assert len(set(timeouts)) == len(timeouts)
