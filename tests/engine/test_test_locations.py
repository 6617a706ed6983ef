"""Where each test is defined (file relative to the project root, line of its ToolTest/CapabilityTest/AgentTest
construction): in its records, in `oac show`, and as its pytest item's location."""

import subprocess
import sys
import xml.etree.ElementTree as ET

from engine_project import Project


def definition_lines(project: Project) -> dict[str, int]:
    """test name → the line of agents.py that constructs it, read from the source."""
    found = {}
    for number, text in enumerate((project.root / "agents.py").read_text().splitlines(), 1):
        for kind in ("ToolTest(name=", "CapabilityTest(name=", "AgentTest(name="):
            if kind in text:
                found[text.split(kind, 1)[1].split('"')[1]] = number
    return found


def test_records_show_and_pytest_place_each_test_on_its_definition(quickstart: Project) -> None:
    lines = definition_lines(quickstart)
    assert len(lines) == 5 and len(set(lines.values())) == 5
    quickstart.test()
    records = quickstart.records()
    assert {r["test_name"]: (r["file"], r["line"]) for r in records} == {
        name: ("agents.py", line) for name, line in lines.items()}
    shown = quickstart.oac("show", "tool:echo-tool::echo-via-profile", check_code=0)
    assert f"  defined at: agents.py:{lines['echo-via-profile']}" in shown.stdout.splitlines()
    done = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:randomly", "--oac", "agents:registry",
                           "--oac-config", "prod", "-q", "--junitxml", "j.xml", "-o", "junit_family=xunit1"],
                          cwd=quickstart.root, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    cases = {case.get("name"): case for case in ET.parse(quickstart.root / "j.xml").getroot().iter("testcase")}
    assert len(cases) == 5
    for case in cases.values():  # pytest writes the item's location: file, and line counted from 0
        name = case.get("name", "").rpartition("::")[2]
        assert (case.get("file"), case.get("line")) == ("agents.py", str(lines[name] - 1)), name


def test_where_a_test_is_built_is_no_part_of_its_value(tmp_path) -> None:
    from open_agent_compiler.model.core.test_model import ToolTest

    first = ToolTest(name="t", input={"a": 1})
    second = ToolTest(name="t", input={"a": 1})
    assert first.defined_at != second.defined_at and first.defined_at[0] == __file__
    assert first == second and dict(first) == dict(second)
    assert first.model_dump() == second.model_dump() and "_oac_defined_at" not in first.model_dump_json()
    assert ToolTest.model_validate_json(first.model_dump_json()) == first
    assert first.model_copy().defined_at == first.defined_at
