"""Fixtures for end-to-end tests of `oac test` (helpers live in engine_project.py)."""

from engine_project import project, quickstart  # noqa: F401
