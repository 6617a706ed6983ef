"""Fixtures for compiler tests (builders live in `oac_builders`)."""

from collections.abc import Callable

import pytest
from oac_builders import team_registry

from open_agent_compiler.model.registry import ResolvedConfig


@pytest.fixture
def team() -> ResolvedConfig:
    return team_registry().resolve_config("prod")


@pytest.fixture
def make_team() -> Callable[..., ResolvedConfig]:
    return lambda postfix="": team_registry(postfix).resolve_config("prod")
