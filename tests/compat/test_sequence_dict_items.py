"""A plain-dict item of a `sequence` mock: oac returns it as data; open-agent-compiler 1.16.5 reads a dict with
MockResponse keys as a nested mock. `oac test` says so in one line per mock when such a mock can answer a
selected test, and says nothing for plain data. Side by side with 1.16.5 where it is installed."""

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from _anchor import anchor_venv

from open_agent_compiler.model.core.mock import MockResponse
from open_agent_compiler.testing.migration_notes import mock_like_items

OURS = Path(sys.executable).with_name("oac")
REGISTRY = textwrap.dedent('''
    from open_agent_compiler.model.core.agent_model import (
        AgentDefinition, AgentHeader, CompilationConfig, ModelParameters, TemplateSlot, TemplateTree)
    from open_agent_compiler.model.core.agent_registry import AgentRegistry
    from open_agent_compiler.model.core.mock_model import MockResponse
    from open_agent_compiler.model.core.permissions_model import BashToolPermission
    from open_agent_compiler.model.core.test_model import JsonPathEvaluator, ToolTest
    from open_agent_compiler.model.core.tools_model import (
        ToolDefinition, ToolDefinitionHeader, ToolDefinitionLogicBash)

    ITEMS = {items}

    def tool(name, items):
        return ToolDefinition(
            header=ToolDefinitionHeader(name=name, description=name, usage_explanation_long="",
                                        usage_explanation_short="", rules=[]),
            bash_tool=ToolDefinitionLogicBash(permission_bash=BashToolPermission("bash", "bash", "allow", ["ls *"]),
                                              positive_examples=[], negative_examples=[], mode_specific_rules=[]),
            mock=MockResponse(kind="sequence", sequence=items),
            tool_tests=[ToolTest(name=name + "-first", input={{}},
                                 evaluators=[JsonPathEvaluator(path="n", expected=1)])])

    def registry():
        reg = AgentRegistry()
        agent = AgentDefinition(header=AgentHeader(agent_id="a", name="a", description="d"),
                                usage_explanation_long="", usage_explanation_short="", system_prompt="p",
                                extra_tools=[tool(name, items) for name, items in ITEMS.items()])
        agent_id = reg.register_agent("a", agent, ModelParameters(model_name="anthropic/claude-sonnet-4-5"))
        reg.register_template(TemplateTree(name="t", description=None, slots=[
            TemplateSlot(name="primary", default_agent_id=agent_id)]))
        reg.create_compilation_config(CompilationConfig(name="c", template_name="t"))
        return reg
''')
NESTED = "({'kind': 'fixed', 'fixed_output': {'n': 1}}, {'kind': 'echo'})"


def project(tmp_path: Path, name: str, items: dict[str, str]) -> Path:
    root = tmp_path / name
    root.mkdir()
    (root / "reg.py").write_text(REGISTRY.format(items="{" + ", ".join(f"{k!r}: {v}" for k, v in items.items()) + "}"))
    return root


def oac_test(oac: Path, root: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(oac), "test", "reg:registry", "--config", "c"], cwd=root, capture_output=True,
                          text=True, timeout=300, env={"PATH": "/usr/bin:/bin", "HOME": str(root),
                                                       "PYTHONDONTWRITEBYTECODE": "1"})


def test_only_mock_shaped_dicts_are_found_nested_ones_too() -> None:
    response = MockResponse(kind="sequence", sequence=(
        {"n": 1}, {"kind": "echo"}, MockResponse(kind="sequence", sequence=({"fixed_output": {"n": 2}}, [1])),
        "text"))
    assert list(mock_like_items(response)) == [("2", ["kind"]), ("3.1", ["fixed_output"])]
    assert list(mock_like_items(MockResponse(kind="sequence", sequence=({"status": "ok"},)))) == []


def test_oac_test_says_it_once_per_mock_and_not_for_plain_data(tmp_path: Path) -> None:
    root = project(tmp_path, "ours", {"nested": NESTED, "plain": "({'n': 1},)"})
    result = oac_test(OURS, root)
    notes = [line for line in result.stderr.splitlines() if "1.16.5" in line]
    assert notes == ["oac: note: tool 'nested' (tool.mock): sequence item 1 (kind, fixed_output); item 2 (kind) is "
                     "a plain dict, returned as data; open-agent-compiler 1.16.5 reads it as a nested mock — write "
                     "MockResponse(...) for that"], result.stderr
    # returned as data: the nested item's `n` is not at the top level, so the first test fails; plain data passes
    assert result.returncode == 1 and "passed=1 failed=1" in result.stdout


def test_doit_test_and_pytest_say_the_same_note_and_doit_list_does_not(tmp_path: Path) -> None:
    """`doit test` and `pytest --oac` run the graph `oac test` runs, notes included (pytest in its summary); a
    doit command that runs nothing (`list`, `info`, also after a loader option with its value) loads the dodo
    without saying them."""
    root = project(tmp_path, "ours", {"nested": NESTED})
    (root / "dodo.py").write_text("from open_agent_compiler.tasks import DOIT_CONFIG, task_test  # noqa: F401\n")
    (root / "pyproject.toml").write_text('[tool.oac]\nfactory = "reg:registry"\nconfig = "c"\n')
    doit = str(OURS.with_name("doit"))
    env = {"PATH": "/usr/bin:/bin", "HOME": str(root), "PYTHONDONTWRITEBYTECODE": "1"}

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([doit, *args], cwd=root, capture_output=True, text=True, timeout=300, env=env)

    said = oac_test(OURS, root).stderr.splitlines()
    notes = [line for line in said if "1.16.5" in line]
    assert len(notes) == 1, said
    tested = run("test")
    assert [line for line in tested.stderr.splitlines() if "1.16.5" in line] == notes, tested.stderr
    pytested = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--oac", "reg:registry",
                               "--oac-config", "c"], cwd=root, capture_output=True, text=True, timeout=300, env=env)
    assert [line for line in pytested.stdout.splitlines() if "1.16.5" in line] == notes, pytested.stdout
    for quiet in (run("list"), run("-f", "dodo.py", "info", "test"), run("forget", "test")):
        assert "1.16.5" not in quiet.stderr + quiet.stdout and "Traceback" not in quiet.stderr, quiet.args


def test_the_public_package_reads_the_same_item_as_a_nested_mock(tmp_path: Path) -> None:
    public = anchor_venv() / "bin/oac"
    theirs = oac_test(public, project(tmp_path, "theirs", {"nested": NESTED}))
    ours = oac_test(OURS, project(tmp_path, "ours", {"nested": NESTED}))
    assert theirs.returncode == 0 and "passed=1 failed=0" in theirs.stdout, theirs.stdout + theirs.stderr
    assert ours.returncode == 1 and "reads it as a nested mock" in ours.stderr
