"""`oac test` exit codes a 1.16.5 project's CI relies on: no tests is a green, empty run; only not_runnable tests
is exit 0 with a note; strict only where the user asked (`--strict`, or a selection that matches nothing out of
a config that has tests)."""

import subprocess
import sys
from pathlib import Path

import pytest

OAC = str(Path(sys.executable).with_name("oac"))
EMPTY = "oac test: discovered=0 passed=0 failed=0 skipped=0 not_runnable=0"

REGISTRY = '''
from open_agent_compiler import (AgentDefinition, AgentHeader, AgentRegistry, AgentTest, CompilationConfig,
                                 ModelParameters, SubstringEvaluator, TemplateSlot, TemplateTree)


def registry(tests=()):
    reg = AgentRegistry()
    greeter = AgentDefinition(header=AgentHeader(agent_id="greeter", name="greeter", description="Greets."),
                              usage_explanation_long="Greet.", usage_explanation_short="greet",
                              system_prompt="Say hello.", agent_tests=list(tests))
    agent_id = reg.register_agent("greeter", greeter, ModelParameters(model_name="anthropic/claude-x"))
    reg.register_template(TemplateTree(name="tpl", slots=[TemplateSlot(name="primary", default_agent_id=agent_id)]))
    reg.create_compilation_config(CompilationConfig(name="prod", template_name="tpl"))
    return reg


def with_agent_test():
    return registry([AgentTest(name="greets", prompt="hi", evaluators=(SubstringEvaluator(needle="hello"),))])
'''


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "agents.py").write_text(REGISTRY)
    return tmp_path


def oac_test(project: Path, factory: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([OAC, "test", f"agents:{factory}", "--config", "prod", *args], cwd=project,
                          capture_output=True, text=True, timeout=120, check=False)


@pytest.mark.parametrize("args", [(), ("--filter", "anything"), ("--kind", "tool")])
def test_a_config_without_tests_is_an_empty_green_run(project: Path, args: tuple[str, ...]) -> None:
    done = oac_test(project, "registry", *args)
    assert (done.returncode, done.stdout.strip(), done.stderr) == (0, EMPTY, "")


def test_only_not_runnable_tests_exit_0_with_a_one_line_note(project: Path) -> None:
    done = oac_test(project, "with_agent_test")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "oac test: discovered=1 passed=0 failed=0 skipped=0 not_runnable=1"
    assert done.stderr.startswith("oac: note: none of the 1 selected tests could run") and done.stderr.count("\n") == 1


def test_strict_where_the_user_asked(project: Path) -> None:
    strict_empty = oac_test(project, "registry", "--strict")
    assert strict_empty.returncode == 2 and "--strict: the config has no tests" in strict_empty.stderr
    strict = oac_test(project, "with_agent_test", "--strict")
    assert strict.returncode == 1 and "strict: test is not_runnable" in strict.stdout
    nothing = oac_test(project, "with_agent_test", "--filter", "no-such-test")
    assert nothing.returncode == 2 and nothing.stdout == ""
    assert "no tests selected (--filter 'no-such-test' matched none of the 1 tests" in nothing.stderr
    assert "unlike 1.16.5" in nothing.stderr  # the deliberate difference says so where the user sees it
