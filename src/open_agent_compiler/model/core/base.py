"""Shared pydantic configuration for definition models."""

from pydantic import BaseModel, ConfigDict


class Frozen(BaseModel):
    """A definition value: immutable, strict about unknown fields."""

    model_config = ConfigDict(frozen=True, extra="forbid")
