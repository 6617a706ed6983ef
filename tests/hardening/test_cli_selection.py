"""Silent passes: a selection that checks nothing, repeated options, a mock profile for a tool that is not there."""

import re
import json
from pathlib import Path

import pytest

from cli_project import ARGS, oac, one_line, quickstart

TIMING = re.compile(r" \[(?:capability|tool|agent)(?: \d+\.\d{3}s)?\]$")  # the kind/duration suffix of result lines

SUMMARY = "oac test: discovered={} passed={} failed={} skipped={} not_runnable={}"


def summary(stdout: str) -> str:
    return [line for line in stdout.splitlines() if line.startswith("oac test: discovered=")][-1]


def records(root: Path) -> list[dict]:
    path = root / ".oac" / "test_results.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return quickstart(tmp_path)


@pytest.mark.parametrize(("args", "needle"), [
    (("--filter", "no-such-test"), "--filter 'no-such-test' matched none of the 5 tests"),
    (("--kind", "tool", "--filter", "conversation"), "--kind tool --filter 'conversation' matched none of the 5"),
])
def test_a_selection_of_nothing_is_one_line_exit_2(args: tuple[str, ...], needle: str, root: Path) -> None:
    done = oac(root, "test", *ARGS, *args)
    one_line(done, "no tests selected", needle)
    assert "discovered=" not in done.stdout and records(root) == []


def test_only_not_runnable_tests_selected_is_exit_0_with_a_note_unless_strict(root: Path) -> None:
    done = oac(root, "test", *ARGS, "--kind", "agent")
    assert done.returncode == 0 and summary(done.stdout) == SUMMARY.format(1, 0, 0, 0, 1)
    assert done.stderr.count("\n") == 1 and "note: none of the 1 selected tests could run" in done.stderr
    assert [r["status"] for r in records(root)] == ["not_runnable"]  # still recorded
    strict = oac(root, "test", *ARGS, "--kind", "agent", "--strict")
    assert strict.returncode == 1 and summary(strict.stdout) == SUMMARY.format(1, 0, 1, 0, 0)


def test_not_runnable_next_to_passing_tests_keeps_the_seed_exit_0(root: Path) -> None:
    done = oac(root, "test", *ARGS)
    assert done.returncode == 0 and done.stderr == ""
    assert summary(done.stdout) == SUMMARY.format(5, 4, 0, 0, 1)


def test_strict_fails_not_runnable_and_tests_that_checked_nothing(root: Path) -> None:
    agents = root / "agents.py"
    agents.write_text(agents.read_text().replace(
        'CapabilityTest(name="write-off-by-default",',
        'CapabilityTest(name="checks-nothing"),\n            CapabilityTest(name="write-off-by-default",'))
    relaxed = oac(root, "test", *ARGS)
    assert relaxed.returncode == 0 and summary(relaxed.stdout) == SUMMARY.format(6, 4, 0, 1, 1)
    strict = oac(root, "test", *ARGS, "--strict")
    assert strict.returncode == 1 and "Traceback" not in strict.stderr
    # the four green tests stay green; the two that verified nothing now fail, saying why
    assert summary(strict.stdout) == SUMMARY.format(6, 0, 2, 4, 0)
    fails = [TIMING.sub("", line) for line in strict.stdout.splitlines() if line.startswith("  FAIL ")]
    assert fails == ["  FAIL 'checks-nothing': strict: test is skipped: nothing to check: no must_* entries or evaluators",
                     "  FAIL 'echo-conversation': strict: test is not_runnable: no invoker wired: agent tests need one "
                     "to run"]
    strict_records = [r for r in records(root) if r["status"] == "fail"]
    assert {r["test_name"] for r in strict_records} == {"checks-nothing", "echo-conversation"}
    assert all(r["passed"] is False for r in strict_records)


def test_strict_from_pyproject(root: Path) -> None:
    (root / "pyproject.toml").write_text('[tool.oac]\nstrict = true\n')
    done = oac(root, "test", *ARGS)
    assert done.returncode == 1 and summary(done.stdout) == SUMMARY.format(5, 4, 1, 0, 0)


def test_repeated_kind_and_filter_combine(root: Path) -> None:
    done = oac(root, "test", *ARGS, "--kind", "tool", "--kind", "capability", "-v")
    assert summary(done.stdout) == SUMMARY.format(4, 4, 0, 0, 0) and done.returncode == 0
    done = oac(root, "test", *ARGS, "--filter", "echo-bash", "--filter", "via-profile", "-v", "--force")
    assert summary(done.stdout) == SUMMARY.format(2, 2, 0, 0, 0)
    assert "  pass 'echo-bash-allowed'" in done.stdout and "  pass 'echo-via-profile'" in done.stdout
    done = oac(root, "test", *ARGS, "--filter", "echo-bash", "--kind", "tool", "--kind", "capability", "--force")
    assert summary(done.stdout) == SUMMARY.format(1, 1, 0, 0, 0)


def test_kind_and_filter_lists_in_pyproject_combine_too(root: Path) -> None:
    (root / "pyproject.toml").write_text('[tool.oac]\nkind = ["tool", "agent"]\nfilter = ["default", "conversation"]\n')
    done = oac(root, "test", *ARGS)
    assert summary(done.stdout) == SUMMARY.format(2, 1, 0, 0, 1)


def test_a_repeated_dialect_is_refused_not_reduced_to_the_last(root: Path) -> None:
    one_line(oac(root, "test", *ARGS, "--dialect", "claude", "--dialect", "codex"),
             "--dialect given 2 times (claude, codex)")
    assert records(root) == []
    same = oac(root, "test", *ARGS, "--dialect", "claude", "--dialect", "claude")
    assert same.returncode == 0  # the same value twice is one dialect


def test_profile_mocking_a_misspelt_tool_names_the_closest(root: Path) -> None:
    agents = root / "agents.py"
    agents.write_text(agents.read_text().replace('reg.register_mock_profile(MockProfile(name="ci", responses={\n'
                                                 '        "echo-tool":',
                                                 'reg.register_mock_profile(MockProfile(name="ci", responses={\n'
                                                 '        "echo-tol":'))
    done = oac(root, "test", *ARGS)
    one_line(done, "mock profile 'ci' mocks tool 'echo-tol'", "did you mean 'echo-tool'?")
    assert records(root) == []


def test_green_skips_next_to_not_runnable_tests_are_verified_not_silent(root: Path) -> None:
    assert oac(root, "test", *ARGS).returncode == 0
    again = oac(root, "test", *ARGS, "--kind", "capability", "--kind", "agent")
    # the capability tests were checked by an earlier green run under the same key: that is not "nothing checked"
    assert again.returncode == 0 and again.stderr == "", again.stderr
    assert summary(again.stdout) == SUMMARY.format(3, 0, 0, 2, 1)
