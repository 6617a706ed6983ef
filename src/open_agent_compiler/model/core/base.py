"""Shared pydantic configuration and field types for definition models."""

import os
from typing import Annotated, Any, TypeVar

from pydantic import BaseModel, BeforeValidator, ConfigDict


# Each class → the distinct fields sets its recent instances share, most recently added first (see
# `SharedFieldsSet`). A few per class: instances of two shapes built in turns (a capability test's case has a
# slot, a tool test's a tool) each find theirs; one set kept per class held 2,000 sets of two values.
_SHARED_FIELDS: dict[type, list[set[str]]] = {}
_KEPT_SETS = 4
_set_fields_set = BaseModel.__dict__["__pydantic_fields_set__"].__set__  # the slot's own setter
# A model's private attributes (`PrivateAttr`), the dict pydantic keeps them in, read and set in place: `self._name`
# is not in the instance's `__dict__`, so a read raised and caught an AttributeError before pydantic's `__getattr__`
# found it (~10 µs), and a set went through pydantic's `__setattr__`.
private_attributes = BaseModel.__dict__["__pydantic_private__"].__get__


_Model = TypeVar("_Model", bound=BaseModel)
_new_model = object.__new__
_set_attribute = object.__setattr__


def unvalidated(cls: type[_Model], values: dict[str, Any], fields_set: set[str],
                private: dict[str, Any] | None = None) -> _Model:
    """An instance of `cls` holding `values` as they are, without validation: for values taken from validated
    models or formed by our own code, where validating again gives the same objects (each caller has a test
    holding its result to what validation gives). `fields_set` may be shared: it is never changed in place."""
    model = _new_model(cls)
    _set_attribute(model, "__dict__", values)
    _set_attribute(model, "__pydantic_fields_set__", fields_set)
    _set_attribute(model, "__pydantic_extra__", None)
    _set_attribute(model, "__pydantic_private__", private)
    return model


class SharedFieldsSet(BaseModel):
    """A frozen model whose instances share one `__pydantic_fields_set__` per distinct set of given fields.

    pydantic gives every instance its own set of the names it was given: 216 bytes, 728 from five names on. A
    registry of 44,000 definitions and a plan of 5,000 tests held ~17 MB of them, nearly all equal to the set of
    the instance built before. Nothing changes a frozen model's set (`__setattr__` refuses first; `model_copy`
    and `copy`/`deepcopy` copy the set before they add to it), so an equal set is taken from one of the class's
    recent instances and the new one let go at once. A subclass that is not frozen keeps its own sets. Read it
    (`model_fields_set`), never change it in place."""

    def model_post_init(self, context: Any, /) -> None:
        fields = self.__pydantic_fields_set__
        recent = _SHARED_FIELDS.get(type(self))
        if recent is None:
            if self.model_config.get("frozen"):
                _SHARED_FIELDS[type(self)] = [fields]
            return
        for known in recent:
            if known == fields:
                _set_fields_set(self, known)
                return
        recent.insert(0, fields)
        del recent[_KEPT_SETS:]


class Frozen(SharedFieldsSet):
    """A definition value: immutable, strict about unknown fields."""

    model_config = ConfigDict(frozen=True, extra="forbid")


def empty_list() -> list[Any]:
    """A new empty list: the `default_factory` of list fields. pydantic inspects every field's factory when it
    builds a class, and `inspect.signature(list)` parses the builtin's text signature each time (~0.8 ms a
    field, 35 fields: ~30 ms of a warm `oac test`); a plain function's signature is read at once."""
    return []


def _none_to_empty(value: Any) -> Any:
    return "" if value is None else value


def _path_to_text(value: Any) -> Any:
    return os.fspath(value) if isinstance(value, os.PathLike) else value


# Registries written for the public package pass None for "no text"; we store "" so readers need no None checks.
Text = Annotated[str, BeforeValidator(_none_to_empty)]
# Paths arrive as str or pathlib.Path; stored as str (names are checked and hashed as text).
PathText = Annotated[str, BeforeValidator(_path_to_text)]
