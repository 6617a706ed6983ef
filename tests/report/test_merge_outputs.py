"""`oac results merge --junit` and its GitHub annotations: the merged result of a pipeline's shards, each failure
on the line that defines its test."""

import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

from test_pipelines import TESTS, cold_then_warm

OAC = str(Path(sys.executable).with_name("oac"))


def shard_files(tmp_path: Path) -> list[Path]:
    """The warm pipeline's records, one file per shard (as each runner uploads its own)."""
    records = [json.loads(line) for line in cold_then_warm(tmp_path).read_text().splitlines()]
    files = []
    for shard in (1, 2, 3):
        path = tmp_path / f"shard{shard}.jsonl"
        path.write_text("".join(json.dumps(r) + "\n" for r in records if r["shard"] == f"{shard}/3"))
        files.append(path)
    return files


def merge(tmp_path: Path, *args: str, github: bool) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "GITHUB_ACTIONS"}
    if github:
        env["GITHUB_ACTIONS"] = "true"
    return subprocess.run([OAC, "results", "merge", *map(str, shard_files(tmp_path)), *args], cwd=tmp_path,
                          capture_output=True, text=True, timeout=60, env=env)


def test_merge_writes_junit_with_each_test_once_and_where_it_is_defined(tmp_path: Path) -> None:
    done = merge(tmp_path, "--junit", "merged.xml", github=False)
    assert done.returncode == 1, done.stderr  # a test failed
    assert "::error" not in done.stdout  # not under GitHub Actions
    suite = ET.parse(tmp_path / "merged.xml").getroot()
    assert suite.get("tests") == "9" and suite.get("failures") == "1" and suite.get("skipped") == "7"
    cases = {case.get("classname"): case for case in suite.iter("testcase")}
    assert sorted(cases) == sorted(test.partition("::")[0] for test in TESTS) or len(suite.findall("testcase")) == 9
    failing = [case for case in suite.iter("testcase") if case.find("failure") is not None]
    assert [(case.get("name"), case.get("file"), case.get("line")) for case in failing] == [("t4", "agents.py", "14")]
    assert "boom" in (failing[0].find("failure").text or "")


def test_merge_under_github_actions_annotates_each_failure_at_its_file_and_line(tmp_path: Path) -> None:
    done = merge(tmp_path, github=True)
    assert done.returncode == 1
    errors = [line for line in done.stdout.splitlines() if line.startswith("::error")]
    assert errors == [f"::error file=agents.py,line=14,title=oac test {TESTS[4].replace(':', '%3A')}::"
                      f"{TESTS[4]}: answer: boom"]


def dated(days_ago: int, test: str) -> dict:
    from datetime import datetime, timedelta, timezone

    from history_data import record

    found = record(0, test, "pass", 0.1)
    found["timestamp"] = (datetime.now(timezone.utc) - timedelta(days=days_ago, hours=1)).isoformat()
    return found


def test_prune_drops_only_records_older_than_the_age_and_keeps_what_it_cannot_date(tmp_path: Path) -> None:
    path = tmp_path / "all.jsonl"
    lines = [json.dumps(dated(40, "x:tool:old")), json.dumps(dated(29, "x:tool:recent")), '{"torn": ',
             json.dumps({**dated(50, "x:tool:undated"), "timestamp": "yesterday"}), json.dumps(dated(0, "x:tool:new"))]
    path.write_text("\n".join(lines) + "\n")
    done = subprocess.run([OAC, "results", "prune", "--results", str(path), "--older-than", "30"],
                          capture_output=True, text=True, timeout=60)  # a bare number: days
    assert done.returncode == 0, done.stderr
    assert "dropped 1 records" in done.stdout
    assert path.read_text() == "\n".join(lines[1:]) + "\n"
    again = subprocess.run([OAC, "results", "prune", "--results", str(path), "--older-than", "12h"],
                           capture_output=True, text=True, timeout=60)
    assert again.returncode == 0 and "dropped 1 records" in again.stdout
    assert [line for line in path.read_text().splitlines()] == lines[2:]


def test_merge_since_keeps_only_the_recent_records(tmp_path: Path) -> None:
    path = tmp_path / "all.jsonl"
    path.write_text(json.dumps(dated(40, "x:tool:old")) + "\n" + json.dumps(dated(1, "x:tool:recent")) + "\n")
    done = subprocess.run([OAC, "results", "merge", str(path), "--since", "30d", "-o", str(tmp_path / "out.jsonl")],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert [json.loads(line)["test_id"] for line in (tmp_path / "out.jsonl").read_text().splitlines()] == [
        "x:tool:recent"]
