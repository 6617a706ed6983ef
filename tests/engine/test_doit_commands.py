"""doit's own commands on our tasks, from a user's dodo.py: every test is a task in every run, green or not."""

import subprocess
import sys
from pathlib import Path

import pytest

from engine_project import SUMMARY, Project, summary_line

DOIT = str(Path(sys.executable).with_name("doit"))
DODO = "from open_agent_compiler.tasks import DOIT_CONFIG, task_test  # noqa: F401\n"
PYPROJECT = '[tool.oac]\nfactory = "agents:registry"\nconfig = "prod"\n'
MOCK_TEST = "test:prod:tool:echo-tool::echo-default-mock"
PROFILE_TEST = "test:prod:tool:echo-tool::echo-via-profile"
ALL_TESTS = {
    "test:prod:agent:primary::echo-conversation", "test:prod:capability:primary::echo-bash-allowed",
    "test:prod:capability:primary::write-off-by-default", MOCK_TEST, PROFILE_TEST,
}


def doit(project: Project, *args: str, code: int | None = 0) -> subprocess.CompletedProcess:
    done = subprocess.run([DOIT, *args], cwd=project.root, capture_output=True, text=True, timeout=120)
    if code is not None:
        assert done.returncode == code, f"exit {done.returncode}\n{done.stdout}\n{done.stderr}"
    return done


def ran(project: Project, since: int) -> list[str]:
    """Test ids with a record written after the first `since` records."""
    return sorted(r["test_id"] for r in project.records()[since:])


@pytest.fixture
def green(quickstart: Project) -> Project:
    """The quickstart with a dodo.py, after one full run: four tests green."""
    quickstart.write("dodo.py", DODO)
    quickstart.write("pyproject.toml", PYPROJECT)
    first = doit(quickstart, "test")
    assert summary_line(first.stdout) == SUMMARY.format(5, 4, 0, 0, 1)
    return quickstart


def test_list_shows_every_test_with_its_doc_when_green(green: Project) -> None:
    listed = doit(green, "list", "--all").stdout.splitlines()
    names = {line.split()[0] for line in listed if line.startswith("test:")}
    assert names == ALL_TESTS
    assert any(line.startswith(MOCK_TEST) and "tool test 'echo-default-mock' on 'echo-tool'" in line for line in listed)
    assert any(line.startswith("oac_compile:prod:opencode") for line in listed)


def test_info_reports_up_to_date_and_run(green: Project) -> None:
    assert "status     : up-to-date" in doit(green, "info", MOCK_TEST).stdout
    green.edit("agents.py", '"from": "tool.mock"', '"from": "tool.mock", "x": 1')  # its mock's output changes
    info = doit(green, "info", MOCK_TEST, code=None).stdout
    assert "status     : run" in info and "the test's key is not the key of a passing run" in info


def test_forget_makes_exactly_that_test_run_next(green: Project) -> None:
    assert "forgetting " + MOCK_TEST in doit(green, "forget", MOCK_TEST).stdout
    before = len(green.records())
    done = green.oac("test", "-v", "--explain", check_code=0)
    assert summary_line(done.stdout) == SUMMARY.format(5, 1, 0, 3, 1)
    assert "  run 'echo-default-mock': never ran" in done.stdout  # forgotten, not "last run failed"
    assert ran(green, before) == ["agent:primary::echo-conversation", "tool:echo-tool::echo-default-mock"]


def test_ignore_keeps_a_test_from_running_even_with_always_execute(green: Project) -> None:
    assert "ignoring " + PROFILE_TEST in doit(green, "ignore", PROFILE_TEST).stdout
    before = len(green.records())
    done = doit(green, "-a", "test")
    assert summary_line(done.stdout) == SUMMARY.format(5, 3, 0, 1, 1)
    assert "tool:echo-tool::echo-via-profile" not in ran(green, before)
    doit(green, "forget", PROFILE_TEST)  # un-ignored: runs again
    before = len(green.records())
    assert summary_line(doit(green, "test").stdout) == SUMMARY.format(5, 1, 0, 3, 1)
    assert "tool:echo-tool::echo-via-profile" in ran(green, before)


def test_always_execute_and_two_processes(green: Project) -> None:
    warm = doit(green, "-n", "2", "test")
    assert summary_line(warm.stdout) == SUMMARY.format(5, 0, 0, 4, 1)
    before = len(green.records())
    forced = doit(green, "-a", "-n", "2", "test")
    assert summary_line(forced.stdout) == SUMMARY.format(5, 4, 0, 0, 1)
    assert len(ran(green, before)) == 5


def test_a_user_task_can_depend_on_one_green_test_and_on_the_group(green: Project) -> None:
    green.write("dodo.py", DODO + '''

def task_deploy():
    return {"actions": ["echo deploying > deployed.txt"], "task_dep": ["%s"]}


def task_release():
    return {"actions": ["echo released > released.txt"], "task_dep": ["test"]}
''' % MOCK_TEST)
    before = len(green.records())
    doit(green, "deploy")
    assert (green.root / "deployed.txt").read_text().strip() == "deploying"
    assert ran(green, before) == []  # the green test was up to date: doit skipped it, deploy still ran
    green.edit("agents.py", 'expected="tool.mock"', 'expected="WRONG"')  # now the test fails: no deploy
    (green.root / "deployed.txt").unlink()
    failed = doit(green, "deploy", code=None)
    assert failed.returncode != 0 and not (green.root / "deployed.txt").exists()
    assert "FAIL 'echo-default-mock'" in failed.stdout
    green.edit("agents.py", 'expected="WRONG"', 'expected="tool.mock"')
    doit(green, "release")
    assert (green.root / "released.txt").exists()


def test_explain_after_fail_then_pass_does_not_say_failed(green: Project) -> None:
    green.edit("agents.py", 'expected="tool.mock"', 'expected="WRONG"')
    failed = green.oac("test", "--explain", check_code=1)
    assert "  run 'echo-default-mock': changed: definition" in failed.stdout
    green.edit("agents.py", 'expected="WRONG"', 'expected="tool.mock"')
    assert "  run 'echo-default-mock': last run failed" in green.oac("test", "--explain", check_code=0).stdout
    green.edit("agents.py", '"from": "tool.mock"', '"from": "tool.mock", "x": 1')
    done = green.oac("test", "--explain", check_code=0)
    assert "  run 'echo-default-mock': changed: target, mocks" in done.stdout


def test_doit_test_writes_the_junit_file_named_in_pyproject(quickstart: Project) -> None:
    quickstart.write("dodo.py", DODO)
    quickstart.write("pyproject.toml", PYPROJECT + 'junit = "reports/junit.xml"\n')
    doit(quickstart, "test")
    import xml.etree.ElementTree as ET
    suite = ET.parse(quickstart.root / "reports" / "junit.xml").getroot()
    assert suite.get("tests") == "5" and suite.get("failures") == "0"
