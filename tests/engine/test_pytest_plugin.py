"""The pytest plugin: the quickstart under `pytest --oac …`, sharing keys, green state and records with `oac test`."""

import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

from engine_project import SUMMARY, Project, green_skips, summary_line

IDS = ["capability:primary::echo-bash-allowed", "capability:primary::write-off-by-default",
       "tool:echo-tool::echo-default-mock", "tool:echo-tool::echo-via-profile", "agent:primary::echo-conversation"]
OAC = ("--oac", "agents:registry", "--oac-config", "prod")


def pytest_run(root: Path, *args: str, code: int | None = None) -> subprocess.CompletedProcess[str]:
    done = subprocess.run([sys.executable, "-m", "pytest", "-rs", "-p", "no:randomly", *args], cwd=root,
                          capture_output=True, text=True, timeout=300)
    if code is not None:
        assert done.returncode == code, done.stdout + done.stderr
    return done


def outcomes(stdout: str) -> dict[str, str]:
    """node id → PASSED/FAILED/SKIPPED from `-v` lines."""
    found = {}
    for line in stdout.splitlines():
        for word in ("PASSED", "FAILED", "SKIPPED"):
            if f" {word}" in line and line.split(" ")[0] in IDS:
                found[line.split(" ")[0]] = word
    return found


def test_quickstart_under_pytest_shares_green_state_and_records_with_oac_test(quickstart: Project) -> None:
    root = quickstart.root
    listed = pytest_run(root, *OAC, "--collect-only", "-q", code=0)
    assert [line for line in listed.stdout.splitlines() if "::" in line] == IDS  # node id = stable test id
    first = pytest_run(root, *OAC, "-v", code=0)
    assert outcomes(first.stdout) == dict(zip(IDS, ["PASSED"] * 4 + ["SKIPPED"]))
    assert "not_runnable: no invoker wired" in first.stdout
    assert len(quickstart.records()) == 5  # the same JSONL records as oac test writes
    second = pytest_run(root, *OAC, "-v", code=0)
    assert outcomes(second.stdout) == dict(zip(IDS, ["SKIPPED"] * 5))
    assert green_skips(second.stdout) == 4
    assert len(quickstart.records()) == 6  # only the not-runnable agent test ran again
    # oac test skips what pytest proved, with the same keys
    after = quickstart.oac("test", "agents:registry", "--config", "prod", check_code=0)
    assert summary_line(after.stdout) == SUMMARY.format(5, 0, 0, 4, 1)
    # -k over the ids, -n 2 over xdist workers
    k = pytest_run(root, *OAC, "-k", "echo and not profile", "-v", code=0)
    assert set(outcomes(k.stdout)) == {IDS[0], IDS[2], IDS[4]} and "2 deselected" in k.stdout
    spread = pytest_run(root, *OAC, "-n", "2", "-q", code=0)
    assert "5 skipped" in spread.stdout


def test_failures_tags_exitfirst_last_failed_and_junit(quickstart: Project) -> None:
    root = quickstart.root
    quickstart.edit("agents.py", 'ToolTest(name="echo-default-mock", input={"text": "hi"},',
                    'ToolTest(name="echo-default-mock", input={"text": "hi"}, tags=("mocked",),')
    quickstart.edit("agents.py", 'expected="tool.mock")', 'expected="nope")')
    quickstart.edit("agents.py", 'must_have_bash_patterns=("uv run scripts/echo.py *",)',
                    'must_have_bash_patterns=("nope *",)')
    failed = pytest_run(root, *OAC, "--junitxml", "junit.xml", code=1)
    assert "2 failed, 2 passed, 1 skipped" in failed.stdout
    # the evidence as `oac test -v` prints it
    assert "  FAIL 'echo-default-mock': equals: 'from': expected \"nope\", found \"tool.mock\" (differs) [tool " \
        in failed.stdout
    suite = ET.parse(root / "junit.xml").getroot().find("testsuite")
    assert suite.get("tests") == "5" and suite.get("failures") == "2" and suite.get("skipped") == "1"
    # -m over tags; --strict-markers does not refuse them
    marked = pytest_run(root, *OAC, "-m", "mocked", "--strict-markers", "-v", code=1)
    assert outcomes(marked.stdout) == {IDS[2]: "FAILED"}
    # -x stops at the first failure; --lf runs only the two that failed
    first_only = pytest_run(root, *OAC, "-x", code=1)
    assert "stopping after 1 failures" in first_only.stdout and "1 failed" in first_only.stdout
    again = pytest_run(root, *OAC, "--lf", "-v", code=1)
    assert outcomes(again.stdout) == {IDS[0]: "FAILED", IDS[2]: "FAILED"}
    # oac test sees the same failures (their records) and its --lf agrees
    lf = quickstart.oac("test", "agents:registry", "--config", "prod", "--lf", "--list", check_code=0)
    assert [line.split()[0] for line in lf.stdout.splitlines()[:-1]] == [IDS[0], IDS[2]]


def test_bad_input_is_a_pytest_usage_error_and_without_oac_nothing_loads(quickstart: Project, tmp_path: Path) -> None:
    bad = pytest_run(quickstart.root, "--oac", "agents:registry", "--oac-config", "nope", code=4)
    assert "oac: " in bad.stderr and "nope" in bad.stderr and "Traceback" not in bad.stderr
    # a bare --oac takes factory and config from [tool.oac]
    quickstart.write("pyproject.toml", '[tool.oac]\nfactory = "agents:registry"\nconfig = "prod"\n')
    listed = pytest_run(quickstart.root, "--oac", "--collect-only", "-q", code=0)
    assert [line for line in listed.stdout.splitlines() if "::" in line] == IDS
    plain = tmp_path / "plain"
    plain.mkdir()
    (plain / "test_alone.py").write_text("import sys\n\n\ndef test_plugin_loaded_nothing():\n"
                                         "    assert not [m for m in sys.modules if m.startswith('open_agent_compiler')]\n")
    pytest_run(plain, "-q", "-p", "no:cacheprovider", code=0)
