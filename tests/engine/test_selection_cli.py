"""`oac test` selection and output like pytest: --list, tags and -m, -k, --lf, -x/--maxfail, --durations, lines
with kind and duration, `oac show`."""

import json
import re

from engine_project import SUMMARY, Project, summary_line

ECHO_MOCK = 'ToolTest(name="echo-default-mock", input={"text": "hi"},'
RESULT_LINE = re.compile(r"^  (pass|FAIL|skip|not_runnable) '[^']+'.* \[(capability|tool|agent)( \d+\.\d{3}s)?\]$")


def tag(quickstart: Project) -> None:
    quickstart.edit("agents.py", ECHO_MOCK, ECHO_MOCK + ' tags=("fast", "mocked"),')
    quickstart.edit("agents.py", 'CapabilityTest(name="echo-bash-allowed",',
                    'CapabilityTest(name="echo-bash-allowed", tags=("fast",),')


def break_echo_mock(quickstart: Project) -> None:
    quickstart.edit("agents.py", 'expected="tool.mock")', 'expected="nope")')


def listed(quickstart: Project, *args: str) -> list[dict]:
    done = quickstart.oac("test", "agents:registry", "--config", "prod", "--list", "--format", "json", *args,
                          check_code=0)
    return json.loads(done.stdout)


def test_list_shows_every_selected_test_and_its_green_state_without_running(quickstart: Project) -> None:
    tag(quickstart)
    before = listed(quickstart)
    assert [(e["id"], e["kind"], e["target"], e["tags"], e["green"]) for e in before] == [
        ("capability:primary::echo-bash-allowed", "capability", "primary", ["fast"], False),
        ("capability:primary::write-off-by-default", "capability", "primary", [], False),
        ("tool:echo-tool::echo-default-mock", "tool", "echo-tool", ["fast", "mocked"], False),
        ("tool:echo-tool::echo-via-profile", "tool", "echo-tool", [], False),
        ("agent:primary::echo-conversation", "agent", "primary", [], False),
    ]
    assert quickstart.records() == [] and not (quickstart.root / ".oac" / "build").exists()  # nothing ran
    quickstart.test()
    after = listed(quickstart)
    assert [e["green"] for e in after] == [True, True, True, True, False]
    text = quickstart.oac("test", "agents:registry", "--config", "prod", "--collect-only", "-m", "fast",
                          check_code=0).stdout.splitlines()
    assert text[0].startswith("capability:primary::echo-bash-allowed  capability  primary  tags=fast  green since ")
    assert text[-1] == "oac test: 2 selected, 2 green"
    # a changed test is no longer green in the listing, exactly as the run would decide
    break_echo_mock(quickstart)
    assert [e["green"] for e in listed(quickstart)] == [True, True, False, True, False]


def test_markers_and_keywords_select_like_pytest(quickstart: Project) -> None:
    tag(quickstart)
    assert [e["id"] for e in listed(quickstart, "-m", "fast and not mocked")] == [
        "capability:primary::echo-bash-allowed"]
    assert [e["id"] for e in listed(quickstart, "-k", "echo and not (profile or conversation)")] == [
        "capability:primary::echo-bash-allowed", "tool:echo-tool::echo-default-mock"]
    # repeated -k: the last one counts, as in pytest; -k and -m combine with --kind
    assert [e["id"] for e in listed(quickstart, "-k", "nothing", "-k", "WRITE")] == [
        "capability:primary::write-off-by-default"]
    assert [e["id"] for e in listed(quickstart, "-m", "fast", "--kind", "tool")] == [
        "tool:echo-tool::echo-default-mock"]
    done = quickstart.test("-m", "fast")
    assert summary_line(done.stdout) == SUMMARY.format(2, 2, 0, 0, 0)
    bad = quickstart.oac("test", "agents:registry", "--config", "prod", "-k", "echo and")
    assert bad.returncode == 2 and bad.stderr.startswith("oac: -k 'echo and': ends where") and "Traceback" not in bad.stderr
    none = quickstart.oac("test", "agents:registry", "--config", "prod", "-m", "slow")
    assert none.returncode == 2 and "-m 'slow' matched none of the 5 tests" in none.stderr


def test_an_unknown_or_malformed_tag_is_refused(quickstart: Project) -> None:
    quickstart.edit("agents.py", ECHO_MOCK, ECHO_MOCK + ' tags=("not",),')
    done = quickstart.oac("test", "agents:registry", "--config", "prod")
    assert done.returncode == 2 and "tag 'not' must be a name" in done.stderr
    quickstart.edit("agents.py", ' tags=("not",),', ' tagz=("x",),')
    done = quickstart.oac("test", "agents:registry", "--config", "prod")
    assert done.returncode == 2 and "tagz" in done.stderr  # unknown fields are still refused


def test_every_result_line_carries_kind_and_duration_and_durations_lists_the_slowest(quickstart: Project) -> None:
    done = quickstart.test("--durations", "2")
    result_lines = [line for line in done.stdout.splitlines() if line.startswith("  ") and "'" in line]
    assert len(result_lines) == 5 and all(RESULT_LINE.match(line) for line in result_lines), done.stdout
    head = done.stdout.splitlines().index("slowest 2 durations:")
    slow = done.stdout.splitlines()[head + 1:head + 3]
    assert all(re.match(r"^ +\d+\.\d{3}s (capability|tool) +pass +\S+::\S+$", line) for line in slow), slow
    again = quickstart.test()
    skips = [line for line in again.stdout.splitlines() if line.startswith("  skip ")]
    assert len(skips) == 4 and all(re.search(r" \[(capability|tool)\]$", line) for line in skips)


def test_last_failed_exitfirst_and_maxfail(quickstart: Project) -> None:
    break_echo_mock(quickstart)
    quickstart.edit("agents.py", 'must_have_bash_patterns=("uv run scripts/echo.py *",)',
                    'must_have_bash_patterns=("nope *",)')  # two tests fail now
    first = quickstart.test(code=1)
    assert summary_line(first.stdout) == SUMMARY.format(5, 2, 2, 0, 1)
    # --lf: only the tests whose last record failed
    lf = quickstart.test("--lf", code=1)
    assert summary_line(lf.stdout) == SUMMARY.format(2, 0, 2, 0, 0)
    # -x: stop after the first failure; the later of -x / --maxfail counts
    x = quickstart.test("--lf", "-x", code=1)
    assert "oac: stopped after 1 failure (--maxfail 1)" in x.stdout
    assert summary_line(x.stdout).startswith("oac test: discovered=1 passed=0 failed=1")
    later = quickstart.test("--lf", "-x", "--maxfail", "2", code=1)
    assert "stopped after 2 failures" in later.stdout and "failed=2" in summary_line(later.stdout)
    earlier = quickstart.test("--lf", "--maxfail", "2", "--exitfirst", code=1)
    assert "stopped after 1 failure " in earlier.stdout
    # fixed: --lf runs the two that failed, then (nothing failed any more) everything
    quickstart.edit("agents.py", 'expected="nope")', 'expected="tool.mock")')
    quickstart.edit("agents.py", '("nope *",)', '("uv run scripts/echo.py *",)')
    quickstart.test("--lf")
    done = quickstart.test("--lf")
    assert "--last-failed: no recorded failure" in done.stderr
    assert summary_line(done.stdout) == SUMMARY.format(5, 0, 0, 4, 1)


def test_show_prints_the_last_record_of_a_test(quickstart: Project) -> None:
    break_echo_mock(quickstart)
    quickstart.test(code=1)
    shown = quickstart.oac("show", "tool:echo-tool::echo-default-mock", check_code=0).stdout
    assert shown.splitlines()[0] == "tool:echo-tool::echo-default-mock"
    for needle in ("  status: fail", "  test_kind: tool", "  duration_s: ", "  timestamp: ", "  composite_hash: ",
                   "  mock_set_hash: ", "    FAIL equals: 'from': expected \"nope\""):
        assert needle in shown, shown
    shown = quickstart.oac("show", "capability:primary::echo-bash-allowed", check_code=0).stdout
    assert "  status: pass" in shown and "  key parts of its last pass:" in shown and "    target: " in shown
    as_json = json.loads(quickstart.oac("show", "capability:primary::echo-bash-allowed", "--format", "json",
                                        check_code=0).stdout)
    assert as_json["record"]["status"] == "pass" and as_json["green_key_parts"]
    missing = quickstart.oac("show", "tool:echo-tool::echo-default-mok")
    assert missing.returncode == 2 and missing.stderr.startswith("oac: no record of test 'tool:echo-tool::echo-default-mok'")
