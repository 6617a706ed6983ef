"""The seed's worked example: exact output on the first run, nothing executed on the second, `doit test` same."""

import re
import json
import subprocess
import sys
from pathlib import Path

from engine_project import SUMMARY, Project, summary_line

from open_agent_compiler.keys.record_hash import composite_hash

TIMING = re.compile(r" \[(?:capability|tool|agent)(?: \d+\.\d{3}s)?\]$")  # the kind/duration suffix of result lines

FIRST = [
    "  pass 'echo-bash-allowed'",
    "  pass 'write-off-by-default'",
    "  pass 'echo-default-mock'",
    "  pass 'echo-via-profile'",
]


def test_first_run_prints_the_seed_lines(quickstart: Project) -> None:
    done = quickstart.test()
    lines = [TIMING.sub("", line) for line in done.stdout.splitlines()]
    for line in FIRST:
        assert line in lines, done.stdout
    assert any(line.startswith("  not_runnable 'echo-conversation'") for line in lines)
    assert summary_line(done.stdout) == SUMMARY.format(5, 4, 0, 0, 1)
    assert lines[-1] == SUMMARY.format(5, 4, 0, 0, 1)
    assert lines[-2] == ""
    assert "Failures:" not in done.stdout


def test_second_run_skips_green_tests_without_executing_them(quickstart: Project) -> None:
    quickstart.test()
    first = quickstart.records()
    assert len(first) == 5
    done = quickstart.test()
    assert summary_line(done.stdout) == SUMMARY.format(5, 0, 0, 4, 1)
    skips = [line for line in done.stdout.splitlines() if line.startswith("  skip ")]
    assert len(skips) == 4 and all("matches green run from" in line for line in skips)
    # only the not-runnable agent test produced a new record: the four green ones never ran
    second = quickstart.records()[len(first):]
    assert [r["test_kind"] for r in second] == ["agent"]
    assert second[0]["status"] == "not_runnable"


def test_records_are_self_describing(quickstart: Project) -> None:
    quickstart.test()
    records = {r["test_id"]: r for r in quickstart.records()}
    assert set(records) == {
        "capability:primary::echo-bash-allowed", "capability:primary::write-off-by-default",
        "tool:echo-tool::echo-default-mock", "tool:echo-tool::echo-via-profile", "agent:primary::echo-conversation",
    }
    via_profile = records["tool:echo-tool::echo-via-profile"]
    for key in ("timestamp", "run_id", "test_id", "test_kind", "test_name", "target_name", "status", "passed",
                "score", "duration_s", "variant", "access_profile", "mock_profile", "model", "dialect",
                "agent_state_hash", "mock_set_hash", "composite_hash", "evidence", "skip_reason"):
        assert key in via_profile
    assert via_profile["mock_profile"] == "ci" and via_profile["passed"] is True and via_profile["score"] == 1.0
    assert via_profile["evidence"][0]["evaluator_kind"] == "json_path"
    assert "+" in via_profile["timestamp"] or via_profile["timestamp"].endswith("Z") or "-" in via_profile["timestamp"][19:]
    cap = records["capability:primary::echo-bash-allowed"]
    assert cap["model"] == "zai-coding-plan/glm-4.5-air" and cap["dialect"] == "opencode"
    assert len({r["run_id"] for r in records.values()}) == 1


def test_doit_test_runs_the_same_graph_and_state(quickstart: Project) -> None:
    quickstart.write("dodo.py", "from open_agent_compiler.tasks import DOIT_CONFIG, task_test  # noqa: F401\n")
    quickstart.write("pyproject.toml", '[tool.oac]\nfactory = "agents:registry"\nconfig = "prod"\nverbose = true\n')
    doit = Path(sys.executable).with_name("doit")
    first = subprocess.run([str(doit), "test"], cwd=quickstart.root, capture_output=True, text=True, timeout=120)
    assert summary_line(first.stdout) == SUMMARY.format(5, 4, 0, 0, 1), first.stdout + first.stderr
    # oac test sees the green state doit test left, and vice versa
    again = quickstart.oac("test", check_code=0)
    assert summary_line(again.stdout) == SUMMARY.format(5, 0, 0, 4, 1)
    third = subprocess.run([str(doit), "test"], cwd=quickstart.root, capture_output=True, text=True, timeout=120)
    assert summary_line(third.stdout) == SUMMARY.format(5, 0, 0, 4, 1), third.stdout + third.stderr
    kinds = [json.loads(line)["test_kind"] for line in (quickstart.root / ".oac/test_results.jsonl").read_text().splitlines()]
    assert kinds.count("tool") == 2 and kinds.count("capability") == 2


def test_force_runs_everything_again(quickstart: Project) -> None:
    quickstart.test()
    done = quickstart.test("--force")
    assert summary_line(done.stdout) == SUMMARY.format(5, 4, 0, 0, 1)


def test_kind_and_filter_select_tests(quickstart: Project) -> None:
    done = quickstart.test("--kind", "tool")
    assert summary_line(done.stdout) == SUMMARY.format(2, 2, 0, 0, 0)
    done = quickstart.test("--filter", "profile", "--force")
    assert summary_line(done.stdout) == SUMMARY.format(1, 1, 0, 0, 0)
    done = quickstart.test("--filter", "capability:primary::", "--force")
    assert summary_line(done.stdout) == SUMMARY.format(2, 2, 0, 0, 0)


def test_junit_and_results_path(quickstart: Project, tmp_path: Path) -> None:
    results = tmp_path / "elsewhere" / "r.jsonl"
    junit = tmp_path / "junit.xml"
    quickstart.test("--results", str(results), "--junit", str(junit))
    assert len(results.read_text().splitlines()) == 5
    import xml.etree.ElementTree as ET
    suite = ET.parse(junit).getroot()
    assert suite.get("tests") == "5" and suite.get("failures") == "0"
    assert len(suite.findall("testcase")) == 5
    assert len(suite.findall("testcase/skipped")) == 1


def test_doit_test_reports_a_failing_test_and_exits_non_zero(quickstart: Project) -> None:
    quickstart.write("dodo.py", "from open_agent_compiler.tasks import DOIT_CONFIG, task_test  # noqa: F401\n")
    quickstart.write("pyproject.toml", '[tool.oac]\nfactory = "agents:registry"\nconfig = "prod"\n')
    quickstart.edit("agents.py", 'EqualsEvaluator(field="from", expected="tool.mock")',
                    'EqualsEvaluator(field="from", expected="WRONG")')
    doit = Path(sys.executable).with_name("doit")
    done = subprocess.run([str(doit), "test"], cwd=quickstart.root, capture_output=True, text=True, timeout=120)
    assert done.returncode == 2, done.stdout + done.stderr
    assert summary_line(done.stdout) == SUMMARY.format(5, 3, 1, 0, 1)
    assert "  FAIL 'echo-default-mock': " in done.stdout and "ERROR" not in done.stdout
    forced = subprocess.run([str(doit), "-a", "test"], cwd=quickstart.root, capture_output=True, text=True,
                            timeout=120)
    assert summary_line(forced.stdout) == SUMMARY.format(5, 3, 1, 0, 1)


def test_record_hashes_have_the_right_values(quickstart: Project) -> None:
    """Each hash in a record is checked by value: the artifact hash against the compiled bytes on disk, the mock
    hash against the mock entry the test reaches, the composite hash against the key the state DB holds green."""
    import sqlite3

    from open_agent_compiler.model.hashing import digest, digest_bytes

    quickstart.test()
    records = {r["test_id"]: r for r in quickstart.records()}
    build = quickstart.root / ".oac" / "build" / "prod" / "opencode"
    agent_file = ".opencode/agents/primary.md"
    cap = records["capability:primary::echo-bash-allowed"]
    assert cap["agent_state_hash"] == digest([(agent_file, digest_bytes((build / agent_file).read_bytes()))])
    tool = records["tool:echo-tool::echo-default-mock"]
    assert tool["mock_set_hash"] == digest({"tool": "echo-tool", "source": "tool.mock", "response": {
        "kind": "fixed", "fixed_output": {"text": "DEFAULT", "from": "tool.mock"}, "sequence": [],
        "callable_spec": None, "description": ""}})
    db = sqlite3.connect(quickstart.root / ".oac" / "doit-state.sqlite3")
    green = dict(db.execute("select task_id, green_key from doit where green_key is not null"))
    assert len(green) == 4
    for test_id, record in records.items():
        if record["status"] == "pass":
            assert composite_hash(green[f"test:prod:{test_id}"]) == record["composite_hash"]
        assert re.fullmatch(r"[0-9a-f]{64}", record["composite_hash"])  # a SHA-256 hex, as the seed documents
    assert len({r["composite_hash"] for r in records.values()}) == 5
