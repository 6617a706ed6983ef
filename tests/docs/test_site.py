"""The docs site: `mkdocs build --strict` passes, and the generated reference pages list every public CLI option,
every `[tool.oac]` key and every field of the evaluator, mock and test models."""

import importlib.util
import os
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import click
import pytest

REPO = Path(__file__).resolve().parents[2]


def hooks() -> ModuleType:
    spec = importlib.util.spec_from_file_location("oac_docs_hooks", REPO / "docs" / "hooks.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def pages() -> dict[str, str]:
    return hooks().pages()


def test_mkdocs_build_strict(tmp_path: Path) -> None:
    if importlib.util.find_spec("mkdocs") is None:
        reason = "mkdocs is not installed (pip install -e '.[docs]'; .ci/run does it)"
        if os.environ.get("CI"):
            pytest.fail(f"CI is set and {reason}")
        pytest.skip(reason)
    site = tmp_path / "site"
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(REPO / "mkdocs.yml"),
                           "-d", str(site)], capture_output=True, text=True, timeout=300,
                          env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"})
    assert done.returncode == 0, done.stderr[-3000:]
    assert "WARNING" not in done.stderr
    for page in ("reference/cli", "reference/configuration", "reference/evaluators", "reference/mocks",
                 "reference/test-models", "report", "concepts", "doit"):
        assert (site / page / "index.html").is_file(), page
    report = (site / "report" / "index.html").read_text()
    assert 'src="../img/report.png"' in report and (site / "img" / "report.png").is_file()


def _commands(group: click.Group, prefix: str = "oac") -> list[tuple[str, click.Command]]:
    found = []
    context = click.Context(group)
    for name in group.list_commands(context):  # oac's group is lazy: its commands are imported on demand
        command = group.get_command(context, name)
        assert command is not None, name
        found.append((f"{prefix} {name}", command))
        if isinstance(command, click.Group):
            found += _commands(command, f"{prefix} {name}")
    return found


def test_cli_reference_lists_every_command_and_public_option(pages: dict[str, str]) -> None:
    from open_agent_compiler.cli import oac

    page = pages["reference/cli.md"]
    commands = _commands(oac)
    assert {"oac test", "oac compile", "oac info", "oac results", "oac report"} <= {path for path, _ in commands}
    for path, command in commands:
        section = page.split(f"## `{path}`\n", 1)
        assert len(section) == 2, f"{path} has no section"
        body = section[1].split("\n## ", 1)[0]
        for param in command.params:
            if getattr(param, "hidden", False):
                continue
            names = param.opts if isinstance(param, click.Option) else [param.human_readable_name]
            for name in names:
                assert f"`{name}`" in body, f"{path}: {name} missing from the CLI reference"


def _section(page: str, heading: str) -> str:
    parts = page.split(heading, 1)
    assert len(parts) == 2, f"no section {heading!r}"
    return parts[1].split("\n## ", 1)[0]


def test_reference_lists_every_key_kind_and_field(pages: dict[str, str]) -> None:
    from typing import get_args

    from open_agent_compiler.model.core.evaluator import Evaluator, EvaluatorResult, FactSpec
    from open_agent_compiler.model.core.mock import MockKind, MockProfile, MockResponse, MockState
    from open_agent_compiler.model.core.test_model import AgentTest, CapabilityTest, ToolTest, Turn
    from open_agent_compiler.tasks.compile_tasks import CompileEntry
    from open_agent_compiler.tasks.settings import COMPILE_ONLY_KEYS, TestOptions
    from open_agent_compiler.testing import evaluation  # noqa: F401  (registers every kind)

    config = pages["reference/configuration.md"]
    for key in [*TestOptions.model_fields, *COMPILE_ONLY_KEYS]:
        if key != "project_root":  # set from where pyproject.toml is, not a key anyone writes
            assert f"| `{key}` |" in config, f"[tool.oac] {key} missing"
    for name in CompileEntry.model_fields:
        assert f"| `{name}` |" in _section(config, "## `[[tool.oac.compile]]` entries"), name

    evaluators = pages["reference/evaluators.md"]
    # a project's own kinds register in the same table when another test loads one: the reference is the built-ins
    built_in = {kind: cls for kind, cls in Evaluator.kinds.items() if cls.__module__.startswith("open_agent_compiler.")}
    assert len(built_in) >= 11
    for kind, cls in built_in.items():
        body = _section(evaluators, f"## `{kind}` — `{cls.__name__}`\n")
        for name in cls.model_fields:
            if name != "kind":
                assert f"| `{name}` |" in body, f"evaluator {kind}: field {name} missing"
        assert f"```python\n{cls.__name__}(" in body, f"evaluator {kind}: no example"
    for model, heading in ((FactSpec, "## `FactSpec`"), (EvaluatorResult, "## `EvaluatorResult`")):
        for name in model.model_fields:
            assert f"| `{name}` |" in _section(evaluators, heading), f"{model.__name__}.{name} missing"

    mocks = pages["reference/mocks.md"]
    for kind in get_args(MockKind):
        assert f"```python\nMockResponse(kind=\"{kind}\"" in _section(mocks, f"## `{kind}`\n"), f"mock kind {kind}"
    for model, heading in ((MockResponse, "## `MockResponse` fields"), (MockProfile, "## `MockProfile`"),
                           (MockState, "## `MockState`")):
        for name in model.model_fields:
            assert f"| `{name}` |" in _section(mocks, heading), f"{model.__name__}.{name} missing"

    tests = pages["reference/test-models.md"]
    for model in (CapabilityTest, ToolTest, AgentTest, Turn):
        body = _section(tests, f"## `{model.__name__}`\n")
        for name, field in model.model_fields.items():
            assert f"| `{name}` |" in body, f"{model.__name__}.{name} missing"
        assert f"```python\n{model.__name__}(" in body


def test_an_invalid_example_fails_the_build() -> None:
    module = hooks()
    module.EVALUATOR_EXAMPLES["equals"] = "EqualsEvaluator(expectd=1)"
    with pytest.raises(Exception, match="expectd"):
        module.evaluators_page()
