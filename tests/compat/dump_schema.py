"""Dump the public model schema of the installed open-agent-compiler (the 1.16.5 reference) as JSON facts.

Run with the reference package's interpreter, never ours:

    ~/.cache/oac-anchor/bin/python tests/compat/dump_schema.py > tests/compat/anchor_schema.json

For every pydantic model or dataclass defined in the modules below it records where it lives, whether the top
level exports it, its config (extra / frozen), and per field the annotation, required-ness and default. It also
records sample inputs, built from each annotation and each confirmed valid by the reference itself, that the
conformance test (test_anchor_conformance.py) feeds to our classes. Values that JSON cannot hold are tagged:
{"$path": str}, {"$tuple": [...]}, {"$model": "module:Class", "fields": {...}}.
"""

from __future__ import annotations

import dataclasses
import enum
import importlib
import inspect
import json
import pathlib
import sys
import types
import typing
from typing import Any

from pydantic import BaseModel

MODULES = (
    "open_agent_compiler.model.core.agent_model",
    "open_agent_compiler.model.core.permissions_model",
    "open_agent_compiler.model.core.skills_model",
    "open_agent_compiler.model.core.tools_model",
    "open_agent_compiler.model.core.mock_model",
    "open_agent_compiler.model.core.test_model",
    "open_agent_compiler.model.core.workflow_model",
    "open_agent_compiler.model.core.model_preset",
    "open_agent_compiler.model.core.variant_spec",
    "open_agent_compiler.model.core.split_profile",
    "open_agent_compiler.model.core.access_profile",
    "open_agent_compiler.testing.evaluation",
)
REGISTRY = ("open_agent_compiler.model.core.agent_registry", "AgentRegistry")
FUNCTIONS = (("open_agent_compiler.testing.evaluation", "evaluate"),)


def type_text(annotation: Any) -> str:
    """A readable, module-free rendering of an annotation."""
    if annotation is type(None):
        return "None"
    if isinstance(annotation, type) and not typing.get_args(annotation):
        return annotation.__name__
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin is typing.Literal:
        return "Literal[" + ", ".join(repr(a) for a in args) + "]"
    if origin in (typing.Union, types.UnionType):
        return " | ".join(type_text(a) for a in args)
    if origin is not None:
        name = getattr(origin, "__name__", str(origin))
        return f"{name}[" + ", ".join("..." if a is Ellipsis else type_text(a) for a in args) + "]"
    if isinstance(annotation, typing.ForwardRef):
        return annotation.__forward_arg__
    return str(annotation).replace("typing.", "")


def encode(value: Any) -> Any:
    """JSON form of a sample or default, with tags for paths, tuples and model instances."""
    if isinstance(value, pathlib.PurePath):
        return {"$path": value.as_posix()}
    if isinstance(value, tuple):
        return {"$tuple": [encode(v) for v in value]}
    if isinstance(value, list):
        return [encode(v) for v in value]
    if isinstance(value, dict):
        return {str(k): encode(v) for k, v in value.items()}
    if isinstance(value, BaseModel):
        fields = {name: encode(getattr(value, name)) for name in value.model_fields_set}
        return {"$model": f"{type(value).__module__}:{type(value).__name__}", "fields": fields}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        fields = {f.name: encode(getattr(value, f.name)) for f in dataclasses.fields(value)}
        return {"$model": f"{type(value).__module__}:{type(value).__name__}", "fields": fields}
    if isinstance(value, enum.Enum):
        return encode(value.value)
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    return {"$repr": repr(value)}


def field_table(cls: type) -> dict[str, dict[str, Any]]:
    """name -> (annotation, required, default) for a pydantic model or dataclass."""
    table: dict[str, dict[str, Any]] = {}
    if issubclass(cls, BaseModel):
        for name, info in cls.model_fields.items():
            required = info.is_required()
            default = None
            if not required:
                default = info.default_factory() if info.default_factory is not None else info.default
            table[name] = {"annotation": info.annotation, "required": required, "default": default}
    else:
        hints = typing.get_type_hints(cls)
        for f in dataclasses.fields(cls):
            required = f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
            default = None
            if not required:
                default = f.default if f.default is not dataclasses.MISSING else f.default_factory()
            table[f.name] = {"annotation": hints[f.name], "required": required, "default": default}
    return table


# Inputs the generic builder cannot guess (validators that tie fields together). Keys are class names.
BASE_OVERRIDES: dict[str, dict[str, Any]] = {
    "Gate": {"checks": lambda: (sample_instance("GateCheck"),)},
    "MockResponse": {"fixed_output": lambda: {"sample": 1}},
    "AgentTest": {"prompt": lambda: "sample prompt"},
    "FactRecallEvaluator": {"facts": lambda: (sample_instance("FactSpec"),)},
    "FactSpec": {"any_of": lambda: ("sample",)},
    "SplitProfile": {"class_map": lambda: {"fast": sample_instance("ModelPreset")}},
    "ScriptDefinition": {
        "target_file_path": lambda: pathlib.Path("scripts/sample.py"),
        "script_contents": lambda: "print('sample')\n",
    },
}
CLASSES: dict[str, type] = {}


def samples(annotation: Any, depth: int = 0) -> list[Any]:
    """Sample values for `annotation`: one per union member and per literal value."""
    if depth > 4:
        return []
    if annotation is Any:
        return ["anything", {"k": 1}]
    if annotation is type(None):
        return [None]
    if isinstance(annotation, typing.ForwardRef):
        annotation = CLASSES.get(annotation.__forward_arg__, str)
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin is typing.Literal:
        return list(args)
    if origin in (typing.Union, types.UnionType):
        return [s for a in args for s in samples(a, depth + 1)[:2]]
    if origin in (list, typing.List):  # noqa: UP006
        inner = samples(args[0], depth + 1) if args else ["item"]
        return [[inner[0]]] if inner else [[]]
    if origin in (tuple, typing.Tuple):  # noqa: UP006
        inner = samples(args[0], depth + 1) if args else ["item"]
        return [(inner[0],)] if inner else [()]
    if origin in (dict, typing.Dict):  # noqa: UP006
        value = samples(args[1], depth + 1)[:1] if len(args) == 2 else ["v"]
        return [{"key": value[0]}] if value else [{}]
    if annotation is bool:
        return [True]
    if annotation is int:
        return [2]
    if annotation is float:
        return [0.5]
    if annotation is str:
        return ["sample"]
    if annotation is dict:
        return [{"key": "value"}]
    if annotation is list:
        return [["item"]]
    if isinstance(annotation, type) and issubclass(annotation, pathlib.PurePath):
        return [pathlib.Path("scripts/sample.py")]
    if isinstance(annotation, type) and (issubclass(annotation, BaseModel) or dataclasses.is_dataclass(annotation)):
        instance = sample_instance(annotation.__name__, depth + 1, annotation)
        return [instance] if instance is not None else []
    return []


def base_kwargs(cls: type, depth: int = 0) -> dict[str, Any]:
    overrides = BASE_OVERRIDES.get(cls.__name__, {})
    kwargs: dict[str, Any] = {name: make() for name, make in overrides.items()}
    for name, fact in field_table(cls).items():
        if fact["required"] and name not in kwargs:
            options = samples(fact["annotation"], depth)
            if options:
                kwargs[name] = options[0]
    return kwargs


def sample_instance(name: str, depth: int = 0, cls: type | None = None) -> Any:
    cls = cls or CLASSES[name]
    try:
        return cls(**base_kwargs(cls, depth))
    except Exception:
        return None


def fact_required(cls: type, name: str) -> bool:
    return bool(field_table(cls)[name]["required"])


def accepted(cls: type, kwargs: dict[str, Any]) -> bool:
    try:
        cls(**kwargs)
    except Exception:
        return False
    return True


def describe(cls: type, top_level: set[str]) -> dict[str, Any]:
    is_model = issubclass(cls, BaseModel)
    config = dict(cls.model_config) if is_model else {}
    frozen = bool(config.get("frozen")) if is_model else bool(cls.__dataclass_params__.frozen)  # type: ignore[attr-defined]
    base = base_kwargs(cls)
    facts: dict[str, Any] = {
        "module": cls.__module__,
        "kind": "pydantic" if is_model else "dataclass",
        "top_level": cls.__name__ in top_level,
        "extra": config.get("extra", "ignore") if is_model else "n/a",
        "frozen": frozen,
        "base": encode(base) if accepted(cls, base) else None,
        "fields": {},
        "methods": sorted(
            name for klass in cls.__mro__ if klass.__module__.startswith("open_agent_compiler.")
            for name, member in vars(klass).items()
            if not name.startswith("_") and (callable(member) or isinstance(member, (property, classmethod,
                                                                                      staticmethod)))
            and name not in field_table(cls)
        ),
    }
    for name, fact in field_table(cls).items():
        valid, valid_plain = [], []
        if facts["base"] is not None:
            # Second try without the hand-given inputs: they may exclude this field (prompt vs turns).
            keep = {k for k in base if k not in BASE_OVERRIDES.get(cls.__name__, {}) or fact_required(cls, k)}
            plain = {k: v for k, v in base.items() if k in keep}
            for value in samples(fact["annotation"]):
                if accepted(cls, {**base, name: value}):
                    valid.append(encode(value))
                elif accepted(cls, {**plain, name: value}):
                    valid_plain.append(encode(value))
        facts["fields"][name] = {
            "annotation": type_text(fact["annotation"]),
            "required": fact["required"],
            "default": None if fact["required"] else encode(fact["default"]),
            "samples": valid,
            "samples_without_overrides": valid_plain,
        }
    facts["overrides"] = sorted(BASE_OVERRIDES.get(cls.__name__, {}))
    if not is_model:
        names = [f.name for f in dataclasses.fields(cls)]
        positional = [samples(field_table(cls)[n]["annotation"])[0] for n in names]
        try:
            cls(*positional)
        except Exception:
            positional = []
        facts["positional_order"] = names
        facts["positional_sample"] = encode(positional)
    return facts


def signature_facts(function: Any) -> list[dict[str, Any]]:
    out = []
    for parameter in inspect.signature(function).parameters.values():
        if parameter.name == "self":
            continue
        out.append({
            "name": parameter.name,
            "kind": parameter.kind.name,
            "required": parameter.default is inspect.Parameter.empty
            and parameter.kind not in (parameter.VAR_POSITIONAL, parameter.VAR_KEYWORD),
        })
    return out


def main() -> None:
    import open_agent_compiler

    top_level = set(dir(open_agent_compiler))
    found: list[type] = []
    for module_name in MODULES:
        module = importlib.import_module(module_name)
        for _, value in inspect.getmembers(module, inspect.isclass):
            if value.__module__ != module_name:
                continue
            if (issubclass(value, BaseModel) and value is not BaseModel) or dataclasses.is_dataclass(value):
                found.append(value)
                CLASSES[value.__name__] = value
    schema: dict[str, Any] = {
        "package": "open-agent-compiler",
        "version": importlib.metadata.version("open-agent-compiler"),
        "python": f"{sys.version_info.major}.{sys.version_info.minor}",
        "classes": {cls.__name__: describe(cls, top_level) for cls in sorted(found, key=lambda c: c.__name__)},
    }
    module_name, class_name = REGISTRY
    registry = getattr(importlib.import_module(module_name), class_name)
    schema["registry"] = {
        "module": module_name,
        "methods": {
            name: signature_facts(member)
            for name, member in sorted(vars(registry).items())
            if callable(member) and not name.startswith("_")
        },
    }
    # Top-level names that one of MODULES (or the programmatic compile) defines or re-exports.
    homes = [*MODULES, REGISTRY[0], "open_agent_compiler.compiler.script"]
    schema["top_level"] = {}
    for name in sorted(n for n in top_level if not n.startswith("_")):
        value = getattr(open_agent_compiler, name)
        if inspect.ismodule(value) or type(value).__name__ == "_Feature":
            continue
        defined = getattr(value, "__module__", None)
        having = [m for m in homes if getattr(importlib.import_module(m), name, None) is value]
        if having:
            schema["top_level"][name] = defined if defined in having else having[0]
    schema["functions"] = {
        f"{module}:{name}": signature_facts(getattr(importlib.import_module(module), name)) for module, name in FUNCTIONS
    }
    json.dump(schema, sys.stdout, indent=1, sort_keys=True)
    sys.stdout.write("\n")


if __name__ == "__main__":
    import importlib.metadata

    main()
