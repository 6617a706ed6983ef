"""A ScriptTool script run as a command, as the harness runs it (no public package needed; the side-by-side
comparison with 1.16.5 is in tests/compat/test_migration_walkthrough.py)."""

import json
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPTS = Path(__file__).resolve().parents[1] / "compat" / "tool_scripts"


def run(script: str, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(SCRIPTS / script), *args], capture_output=True, text=True,
                          timeout=120, cwd=SCRIPTS, env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(SCRIPTS),
                                                         "PYTHONDONTWRITEBYTECODE": "1", **env})


@pytest.mark.parametrize("args", [("--topic", "db", "--limit", "many"), ("--topic", "db", "--bogus", "1"),
                                  ("--limit", "2"), ("--topic", "db", "--mock", "no-such-file.json"),
                                  ("--topic", "db", "--mock-callable", "notes_tool.canned")])
def test_bad_input_exits_2_with_one_line(args: tuple[str, ...]) -> None:
    result = run("notes_tool.py", *args)
    assert (result.returncode, result.stdout) == (2, "")
    assert len(result.stderr.splitlines()) == 1 and result.stderr.startswith("notes: invalid input:")


def test_a_bad_resources_variable_is_bad_input() -> None:
    result = run("notes_tool.py", "--topic", "db", OAC_RESOURCES_JSON="{not json")
    assert result.returncode == 2 and "$OAC_RESOURCES_JSON is not JSON" in result.stderr


def test_the_mock_sources_in_order_then_mock_response_then_execute(tmp_path: Path) -> None:
    env_mock = json.dumps({"notes": ["env"], "source": "env"})
    flag_mock = json.dumps({"notes": ["flag"], "source": "flag"})
    answer = lambda *a, **e: json.loads(run(*a, **e).stdout)  # noqa: E731
    assert answer("notes_tool.py", "--topic", "db", OAC_MOCK_RESPONSE=env_mock)["source"] == "env"
    assert answer("notes_tool.py", "--topic", "db", "--mock", flag_mock, OAC_MOCK_RESPONSE=env_mock)["source"] == "flag"
    assert answer("notes_tool.py", "--topic", "db", "--mock", flag_mock,
                  "--mock-callable", "notes_tool:canned")["source"] == "callable"
    assert answer("quiet_tool.py", "--topic", "canned")["source"] == "mock_response"
    assert answer("quiet_tool.py", "--topic", "plain")["source"] == "real"


def test_execute_receives_the_bound_resources(tmp_path: Path) -> None:
    db = tmp_path / "notes.db"
    with sqlite3.connect(db) as connection:
        connection.execute("create table notes (id integer primary key, topic text, body text)")
        connection.execute("insert into notes (topic, body) values ('db', 'kept')")
    bound = json.dumps({"notes": {"kind": "sqlite", "config": {"path": str(db)}}})
    assert json.loads(run("notes_tool.py", "--topic", "db", OAC_RESOURCES_JSON=bound).stdout) == {
        "notes": ["kept"], "source": "notes"}
    assert json.loads(run("notes_tool.py", "--topic", "db").stdout)["source"] == "not bound"
