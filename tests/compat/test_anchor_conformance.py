"""Our public model against the schema of open-agent-compiler 1.16.5 (tests/compat/anchor_schema.json, written by
dump_schema.py with the reference package installed): every class at its module path, every input the reference
accepts accepted by ours, every registry method callable the same way. Each deliberate difference is listed below
with its reason; a listed difference that no longer differs fails too, so the list stays true.
"""

import importlib
import inspect
import json
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel, ValidationError

import open_agent_compiler

SCHEMA = json.loads((Path(__file__).with_name("anchor_schema.json")).read_text())
CLASSES: dict[str, dict[str, Any]] = SCHEMA["classes"]

# Classes of the reference we do not provide, and why.
NOT_PROVIDED: dict[str, str] = {
    "Permission": "the reference's untyped permission base; no registry constructs it, our permissions are the two"
    " concrete kinds",
    "ToolPermission": "same: an abstract base the reference itself only subclasses",
}

# Classes provided as a base only: constructing one dispatches on `kind` to the concrete evaluator, which then
# needs its own fields. Their fields are checked on every concrete subclass.
ABSTRACT: dict[str, str] = {
    "Evaluator": "a bare evaluator has nothing to check; Evaluator(kind=...) builds the concrete kind instead",
}

# Inputs the reference accepts that ours rejects, keyed "Class.field" (or "Class" for the minimal input).
REJECTED: dict[str, str] = {
    "FactRecallEvaluator.facts": "an evaluator with neither facts nor forbidden strings checks nothing; a test"
    " built on it would always pass, so we refuse it when it is defined (any non-empty facts are accepted)",
}

# Fields whose default differs from the reference's, and why the difference cannot change a result.
DEFAULTS: dict[str, str] = {}

# Reference classes that are mutable where ours is frozen (definitions are values: hashed, cached, shared).
FROZEN_HERE: dict[str, str] = {
    name: "a definition is a value: it is content-hashed for caching and shared between agents, so it must not"
    " change after validation (use model_copy(update=...))"
    for name in (
        "AgentDefinition", "AgentHeader", "AgentVariant", "AgentWorkflowStep", "BashToolPermission",
        "CompilationConfig", "JsonToolPermission", "MCPServerDefinition", "ModelParameters", "ScriptDefinition",
        "SkillDefinition", "SkillExample", "TemplateSlot", "TemplateTree", "ToolDefinition", "ToolDefinitionHeader",
        "ToolDefinitionLogicBash", "ToolDefinitionLogicJson", "ToolPermissions", "ToolScriptDefinition",
        "WorkflowStep",
    )
}
# Reference classes that are frozen where ours is mutable.
MUTABLE_HERE: dict[str, str] = {}

# The reference ignores unknown fields; ours reject them, naming the field and the closest valid one.
UNKNOWN_FIELDS_REJECTED = "a typo in a definition silently dropped would compile an agent other than the one written"

# Registry methods whose return differs in kind from the reference's, and why callers see no difference.
REGISTRY_RETURNS: dict[str, str] = {
    "resolve_config": "returns ResolvedConfig, which reads as the reference's slot -> AgentVariant mapping"
    " (indexing, iteration, keys/values/items/get) and carries our resolution (compiled names, tools)",
}


def decode(value: Any) -> Any:
    """A sample from the schema as a Python value; models become OUR class at the reference's module path."""
    if isinstance(value, list):
        return [decode(v) for v in value]
    if isinstance(value, dict):
        if "$path" in value:
            return Path(value["$path"])
        if "$tuple" in value:
            return tuple(decode(v) for v in value["$tuple"])
        if "$model" in value:
            module, name = value["$model"].split(":")
            return getattr(importlib.import_module(module), name)(**decode(value["fields"]))
        return {k: decode(v) for k, v in value.items()}
    return value


def ours(name: str) -> type:
    return getattr(importlib.import_module(CLASSES[name]["module"]), name)


PROVIDED = sorted(name for name in CLASSES if name not in NOT_PROVIDED)
CONCRETE = [name for name in PROVIDED if name not in ABSTRACT]


def accepts(cls: type, args: tuple[Any, ...] = (), kwargs: dict[str, Any] | None = None) -> str | None:
    """None when `cls` accepts the input, else why not (one line)."""
    try:
        cls(*args, **(kwargs or {}))
    except (ValidationError, TypeError, ValueError) as exc:
        return " ".join(str(exc).split())[:300]
    return None


@pytest.mark.parametrize("name", sorted(CLASSES))
def test_class_lives_at_the_reference_module_path(name: str) -> None:
    facts = CLASSES[name]
    module = importlib.import_module(facts["module"])
    if name in NOT_PROVIDED:
        assert not hasattr(module, name), f"{name} is provided now: drop it from NOT_PROVIDED"
        return
    assert isinstance(getattr(module, name, None), type), f"{facts['module']} has no class {name}"
    if facts["top_level"]:
        assert getattr(open_agent_compiler, name, None) is getattr(module, name), f"top level lacks {name}"


def field_cases() -> list[tuple[str, str, Any, bool]]:
    """(class, field, sample, with the hand-given parts of the minimal input)."""
    cases = []
    for name in CONCRETE:
        for field, facts in CLASSES[name]["fields"].items():
            cases += [(name, field, sample, True) for sample in facts["samples"]]
            cases += [(name, field, sample, False) for sample in facts["samples_without_overrides"]]
    return cases


def minimal_input(name: str, with_overrides: bool = True) -> dict[str, Any]:
    facts = CLASSES[name]
    base = decode(facts["base"])
    if not with_overrides:
        required = {f for f, v in facts["fields"].items() if v["required"]}
        base = {k: v for k, v in base.items() if k not in facts["overrides"] or k in required}
    return base


@pytest.mark.parametrize("name", CONCRETE)
def test_minimal_reference_input_is_accepted(name: str) -> None:
    assert CLASSES[name]["base"] is not None, f"the reference's own minimal input for {name} was not valid there"
    problem = accepts(ours(name), kwargs=minimal_input(name))
    assert problem is None, f"{name}(**{CLASSES[name]['base']}) rejected: {problem}"


@pytest.mark.parametrize(("name", "field", "sample", "with_overrides"), field_cases(),
                         ids=lambda v: v if isinstance(v, str) else "")
def test_every_field_value_the_reference_accepts_is_accepted(name: str, field: str, sample: Any,
                                                             with_overrides: bool) -> None:
    problem = accepts(ours(name), kwargs={**minimal_input(name, with_overrides), field: decode(sample)})
    key = f"{name}.{field}"
    if key in REJECTED:
        assert problem is not None or decode(sample) != (), f"{key}={sample!r} is accepted now: unlist it"
        return
    assert problem is None, f"{name}.{field}={sample!r} rejected: {problem}"


@pytest.mark.parametrize("key", sorted(REJECTED))
def test_each_listed_rejection_still_happens(key: str) -> None:
    name, _, field = key.partition(".")
    default = decode(CLASSES[name]["fields"][field]["default"])
    minimal = {k: v for k, v in minimal_input(name).items() if k != field}
    assert accepts(ours(name), kwargs={**minimal, field: default}) is not None, f"{key} is accepted now: unlist it"


@pytest.mark.parametrize("name", CONCRETE)
def test_fields_optional_there_are_optional_here_with_the_same_default(name: str) -> None:
    cls = ours(name)
    assert issubclass(cls, BaseModel)
    for field, facts in CLASSES[name]["fields"].items():
        assert field in cls.model_fields, f"{name} lacks field {field!r}"
        if facts["required"]:
            continue
        info = cls.model_fields[field]
        assert not info.is_required(), f"{name}.{field} is optional there, required here"
        default = info.default_factory() if info.default_factory is not None else info.default
        expected = decode(facts["default"])
        same = _normal(default) == _normal(expected) or (expected is None and default == "")
        key = f"{name}.{field}"
        if key in DEFAULTS:  # pragma: no cover - none listed today
            assert not same, f"{key} has the reference's default now: drop it from DEFAULTS"
        else:
            assert same, f"{key} defaults to {default!r} here, {expected!r} there"


def _normal(value: Any) -> Any:
    if isinstance(value, BaseModel):
        return value.model_dump()
    if isinstance(value, (list, tuple)):
        return [_normal(v) for v in value]
    if isinstance(value, Path):
        return value.as_posix()
    return value


@pytest.mark.parametrize("name", [n for n in PROVIDED if CLASSES[n]["kind"] == "dataclass"])
def test_positional_construction(name: str) -> None:
    facts = CLASSES[name]
    args = tuple(decode(facts["positional_sample"]))
    assert args, f"no positional sample for {name}"
    problem = accepts(ours(name), args=args)
    assert problem is None, f"{name}{args} rejected: {problem}"
    built = ours(name)(*args)
    assert [getattr(built, f) for f in facts["positional_order"]] == [_normal(a) for a in args]


@pytest.mark.parametrize("name", CONCRETE)
def test_frozen_and_unknown_field_differences_are_the_listed_ones(name: str) -> None:
    cls = ours(name)
    theirs_frozen = CLASSES[name]["frozen"]
    ours_frozen = bool(cls.model_config.get("frozen"))  # type: ignore[attr-defined]
    if ours_frozen and not theirs_frozen:
        assert name in FROZEN_HERE, f"{name} is frozen here only: list it in FROZEN_HERE with the reason"
    elif theirs_frozen and not ours_frozen:
        assert name in MUTABLE_HERE, f"{name} is mutable here only: list it in MUTABLE_HERE with the reason"
    else:
        assert name not in FROZEN_HERE and name not in MUTABLE_HERE, f"{name} no longer differs: unlist it"
    if cls.model_config.get("extra") == "forbid":  # type: ignore[attr-defined]
        assert UNKNOWN_FIELDS_REJECTED
        with pytest.raises(ValidationError, match="typo_field"):
            cls(**minimal_input(name) | {"typo_field": 1})


def _parameters(function: Any) -> list[inspect.Parameter]:
    return [p for p in inspect.signature(function).parameters.values() if p.name != "self"]


def _check_callable_like(label: str, function: Any, expected: list[dict[str, Any]]) -> None:
    parameters = _parameters(function)
    by_name = {p.name: p for p in parameters}
    positional = [p.name for p in parameters if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    for index, facts in enumerate(p for p in expected if p["kind"] == "POSITIONAL_OR_KEYWORD"):
        assert positional[index: index + 1] == [facts["name"]], f"{label}: parameter {index} should be {facts['name']!r}"
    for facts in expected:
        assert facts["name"] in by_name, f"{label} lacks parameter {facts['name']!r}"
    names = {p["name"] for p in expected}
    for parameter in parameters:
        if parameter.name not in names and parameter.kind not in (parameter.VAR_POSITIONAL, parameter.VAR_KEYWORD):
            assert parameter.default is not inspect.Parameter.empty, f"{label}: our extra {parameter.name!r} is required"


@pytest.mark.parametrize("method", sorted(SCHEMA["registry"]["methods"]))
def test_registry_method_is_callable_the_same_way(method: str) -> None:
    registry = getattr(importlib.import_module(SCHEMA["registry"]["module"]), "AgentRegistry")
    assert registry is open_agent_compiler.AgentRegistry
    assert callable(getattr(registry, method, None)), f"AgentRegistry lacks {method}"
    _check_callable_like(f"AgentRegistry.{method}", getattr(registry, method), SCHEMA["registry"]["methods"][method])


@pytest.mark.parametrize("spec", sorted(SCHEMA["functions"]))
def test_function_is_callable_the_same_way(spec: str) -> None:
    module, name = spec.split(":")
    function = getattr(importlib.import_module(module), name, None)
    assert callable(function), f"{spec} is missing"
    _check_callable_like(spec, function, SCHEMA["functions"][spec])


# Methods of reference classes we do not provide, keyed "Class.method", and why.
METHODS_NOT_PROVIDED: dict[str, str] = {
    "ScriptDefinition.check_if_file_has_correct_extention": "a validator of the reference, run on construction"
    " (ours checks the suffix against the type as well); not an API",
    "ScriptDefinition.verify_file_existance": "a validator of the reference; ours reports a missing source file"
    " when compiling, naming the tool",
}


@pytest.mark.parametrize("name", CONCRETE)
def test_methods_and_properties_are_there(name: str) -> None:
    cls = ours(name)
    for method in CLASSES[name]["methods"]:
        key = f"{name}.{method}"
        if key in METHODS_NOT_PROVIDED:
            assert not hasattr(cls, method), f"{key} exists now: unlist it"
        else:
            assert hasattr(cls, method), f"{name} lacks {method}"


# Top-level names of the reference's definition modules we do not export, and why.
NOT_AT_TOP_LEVEL: dict[str, str] = {
}


@pytest.mark.parametrize("name", sorted(SCHEMA["top_level"]))
def test_top_level_name_is_exported(name: str) -> None:
    if name in NOT_PROVIDED or name in NOT_AT_TOP_LEVEL:
        assert not hasattr(open_agent_compiler, name), f"{name} is exported now: unlist it"
        return
    assert hasattr(open_agent_compiler, name), f"open_agent_compiler.{name} ({SCHEMA['top_level'][name]}) is missing"
    assert hasattr(importlib.import_module(SCHEMA["top_level"][name]), name), f"{SCHEMA['top_level'][name]}.{name}"


def test_the_lists_name_only_reference_facts() -> None:
    for key in [*REJECTED, *DEFAULTS]:
        name, _, field = key.partition(".")
        assert name in CLASSES and (not field or field in CLASSES[name]["fields"]), f"{key} is not in the schema"
    for name in [*NOT_PROVIDED, *ABSTRACT, *FROZEN_HERE, *MUTABLE_HERE]:
        assert name in CLASSES, f"{name} is not in the schema"
    assert set(NOT_AT_TOP_LEVEL) <= set(SCHEMA["top_level"])
    assert set(REGISTRY_RETURNS) <= set(SCHEMA["registry"]["methods"])


def test_the_type_aliases_name_what_we_have() -> None:
    """`EvaluatorKind` / `AnyEvaluator` (type hints in registries) cover exactly the registered evaluator kinds."""
    from typing import get_args

    from pydantic import TypeAdapter

    from open_agent_compiler.testing.evaluation import EVALUATORS

    assert set(get_args(open_agent_compiler.EvaluatorKind)) == set(EVALUATORS)
    assert set(get_args(open_agent_compiler.AnyEvaluator)) == set(EVALUATORS.values())
    judged = TypeAdapter(open_agent_compiler.AnyEvaluator).validate_python({"kind": "substring", "needle": "x"})
    assert type(judged) is EVALUATORS["substring"]
