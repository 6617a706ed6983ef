"""Shared pydantic configuration and field types for definition models."""

import os
from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator, ConfigDict


class Frozen(BaseModel):
    """A definition value: immutable, strict about unknown fields."""

    model_config = ConfigDict(frozen=True, extra="forbid")


def _none_to_empty(value: Any) -> Any:
    return "" if value is None else value


def _path_to_text(value: Any) -> Any:
    return os.fspath(value) if isinstance(value, os.PathLike) else value


# Registries written for the public package pass None for "no text"; we store "" so readers need no None checks.
Text = Annotated[str, BeforeValidator(_none_to_empty)]
# Paths arrive as str or pathlib.Path; stored as str (names are checked and hashed as text).
PathText = Annotated[str, BeforeValidator(_path_to_text)]
