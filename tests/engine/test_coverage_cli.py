"""`oac coverage` on the seed's quickstart: the exact table, before and after a run, --fail-under, JSON."""

import json

from engine_project import Project

TABLE = """\
oac coverage: config prod (dialect opencode)
agent primary (slot primary)
  tool       allow echo-tool: exercises tool:echo-tool::echo-default-mock ({t}); exercises tool:echo-tool::echo-via-profile ({t}); exercises agent:primary::echo-conversation ({a})
  bash       allow uv run scripts/echo.py *: checks capability:primary::echo-bash-allowed ({t}); exercises tool:echo-tool::echo-default-mock ({t}); exercises tool:echo-tool::echo-via-profile ({t}); exercises agent:primary::echo-conversation ({a})
  permission deny  read: UNCOVERED
  permission deny  write: checks capability:primary::write-off-by-default ({t})
  permission deny  edit: UNCOVERED
  permission deny  task: UNCOVERED
  permission deny  skill: UNCOVERED
  permission deny  mcp: UNCOVERED
  permission deny  webfetch: UNCOVERED
  permission deny  websearch: UNCOVERED
oac coverage: 3/10 grants covered (30.0%)
"""


def test_quickstart_table_from_definitions_then_records(quickstart: Project) -> None:
    before = quickstart.oac("coverage", "agents:registry", "--config", "prod", check_code=0)
    assert before.stdout == TABLE.format(t="never run", a="never run")
    assert not (quickstart.root / ".oac" / "test_results.jsonl").exists()  # nothing ran
    quickstart.test()
    after = quickstart.oac("coverage", "agents:registry", "--config", "prod", check_code=0)
    assert after.stdout == TABLE.format(t="pass", a="not_runnable")


def test_fail_under_and_json(quickstart: Project) -> None:
    quickstart.oac("coverage", "agents:registry", "--config", "prod", "--fail-under", "30", check_code=0)
    under = quickstart.oac("coverage", "agents:registry", "--config", "prod", "--fail-under", "30.5", check_code=1)
    assert "30.0% of grants covered, under --fail-under 30.5" in under.stderr
    data = json.loads(quickstart.oac("coverage", "agents:registry", "--config", "prod", "--format", "json",
                                     check_code=0).stdout)
    assert (data["covered"], data["total"], data["percent"]) == (3, 10, 30.0)
    uncovered = [g["name"] for g in data["agents"][0]["grants"] if not g["covered"]]
    assert uncovered == ["read", "edit", "task", "skill", "mcp", "webfetch", "websearch"]


def test_unknown_config_is_one_line(quickstart: Project) -> None:
    done = quickstart.oac("coverage", "agents:registry", "--config", "nope", check_code=2)
    assert len(done.stderr.strip().splitlines()) == 1 and "nope" in done.stderr and "Traceback" not in done.stderr
