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
