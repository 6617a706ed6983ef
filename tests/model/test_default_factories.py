"""Building the model classes is part of every run's start: pydantic inspects each field's `default_factory`, and
for a builtin such as `list` that parses its text signature every time (~0.8 ms a field; issue 18)."""

import importlib
import pkgutil

from pydantic import BaseModel

import open_agent_compiler.model.core as core
from open_agent_compiler.model.core.base import empty_list


def test_no_definition_field_uses_a_builtin_with_a_text_signature_as_its_factory() -> None:
    for info in pkgutil.iter_modules(core.__path__):
        importlib.import_module(f"{core.__name__}.{info.name}")
    models = [cls for cls in _subclasses(BaseModel) if cls.__module__.startswith(core.__name__ + ".")]
    assert len(models) > 40
    for model in models:
        for name, field in model.model_fields.items():
            factory = field.default_factory
            assert getattr(factory, "__text_signature__", None) is None, f"{model.__name__}.{name}: {factory}"


def test_a_list_field_still_gets_a_new_empty_list_each_time() -> None:
    from open_agent_compiler import ToolDefinitionHeader

    first, second = ToolDefinitionHeader(name="a", description="d"), ToolDefinitionHeader(name="b", description="d")
    assert first.rules == [] and first.rules is not second.rules
    assert empty_list() == [] and empty_list() is not empty_list()


def _subclasses(cls: type) -> set[type]:
    found = set()
    for sub in cls.__subclasses__():
        found |= {sub} | _subclasses(sub)
    return found
