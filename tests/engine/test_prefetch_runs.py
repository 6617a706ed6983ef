"""The prefetcher starts real handlers only of tests that will run them: never of a green (skipped) test, never
under --hermetic (where the test FAILs instead of running its handler)."""

import io

import pytest

from engine_project import Project
from open_agent_compiler.tasks import build_options, graph, run_tests


REAL_START = graph.start_handler


def started_by_prefetch(project: Project, monkeypatch: pytest.MonkeyPatch, **values) -> list[str]:
    """One in-process run; the tools whose real handler the prefetcher started."""
    started: list[str] = []
    real = REAL_START

    def recording(*args, **kwargs):
        started.append(kwargs["tool"].name)
        return real(*args, **kwargs)

    monkeypatch.setattr(graph, "start_handler", recording)
    monkeypatch.chdir(project.root)
    monkeypatch.delenv("OAC_HERMETIC", raising=False)
    out = io.StringIO()
    run_tests(build_options(project.root, {"factory": "agents:registry", "config": "prod", **values}), out)
    return started


def test_the_handler_of_a_green_test_is_not_started(project: Project, monkeypatch: pytest.MonkeyPatch) -> None:
    assert started_by_prefetch(project, monkeypatch) == ["lookup"]  # cold: it will run, so it may start early
    project.edit("mockmod.py", "def answer", "# edited: the counter test runs again\ndef answer")
    assert started_by_prefetch(project, monkeypatch) == []  # lookup-real is green: skipped, never started
    assert project.executions().count("lookup") == 1  # (the counter mock logs its calls too)


def test_no_real_handler_is_started_under_hermetic(project: Project, monkeypatch: pytest.MonkeyPatch) -> None:
    assert started_by_prefetch(project, monkeypatch, hermetic=True, force=True) == []
    assert "lookup" not in project.executions()
