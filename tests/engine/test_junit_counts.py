"""JUnit suite-level counts: not_runnable tests count as skipped (CI must not show them as passed)."""

import xml.etree.ElementTree as ET
from pathlib import Path

from open_agent_compiler.tasks.junit import write_junit
from open_agent_compiler.tasks.reporter import RunTally


def test_suite_skipped_counts_not_runnable_and_green_skips(tmp_path: Path) -> None:
    tally = RunTally()
    tally.passed, tally.skipped, tally.not_runnable, tally.failed = 1, 1, 2, 1
    tally.rows = [("tool:a::p", "p", "pass", 0.1, ""), ("tool:a::s", "s", "skipped", 0.0, "matches green run"),
                  ("agent:x::n1", "n1", "not_runnable", 0.0, "no invoker"),
                  ("agent:x::n2", "n2", "not_runnable", 0.0, "no invoker"), ("tool:a::f", "f", "fail", 0.2, "boom")]
    write_junit(tmp_path / "j.xml", tally)
    suite = ET.parse(tmp_path / "j.xml").getroot()
    assert (suite.get("tests"), suite.get("failures"), suite.get("skipped"), suite.get("errors")) == ("5", "1", "3", "0")
    skipped = [case.get("name") for case in suite if case.find("skipped") is not None]
    assert skipped == ["s", "n1", "n2"]
    assert suite.find("testcase[@name='n1']/skipped").get("message") == "not_runnable: no invoker"


def test_suite_failures_count_flaky_tests_only_when_flaky_counts_as_fail(tmp_path: Path) -> None:
    rows = [("tool:a::p", "p", "pass", 0.1, ""), ("tool:a::k", "k", "flaky", 0.1, "1/2 failed"),
            ("tool:a::f", "f", "fail", 0.2, "boom")]
    for flaky_as, failures in (("fail", "2"), ("pass", "1")):
        tally = RunTally()
        tally.passed, tally.failed, tally.flaky, tally.flaky_as, tally.rows = 1, 1, 1, flaky_as, rows
        write_junit(tmp_path / "j.xml", tally)
        suite = ET.parse(tmp_path / "j.xml").getroot()
        assert suite.get("failures") == failures, flaky_as
        assert (suite.find("testcase[@name='k']/failure") is not None) == (flaky_as == "fail")


def test_a_record_says_passed_only_for_a_pass(tmp_path: Path) -> None:
    from types import SimpleNamespace

    from open_agent_compiler.tasks.records import build_record
    from open_agent_compiler.history.log import TestOutcome

    case = SimpleNamespace(kind="tool", name="t", target_name="echo", test=SimpleNamespace(access_profile=None),
                           mock_profile=None)
    plan = SimpleNamespace(by_id={"tool:echo::t": case}, run_id="r", keys={"tool:echo::t": "k"},
                           options=SimpleNamespace(variant=None, dialect="opencode", config="prod", pipeline=None,
                                                   shard=None), root=tmp_path,
                           keyer=SimpleNamespace(view_of=lambda _id: {"target": "t", "mocks": None, "invoker": None}),
                           model_name=lambda _case: None)
    for status, passed in (("pass", True), ("skipped", False), ("not_runnable", False), ("fail", False)):
        record = build_record(plan, "tool:echo::t", TestOutcome(status=status, score=1.0 if passed else 0.0), "now")
        assert record.passed is passed, status
