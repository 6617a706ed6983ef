"""`oac report`: one self-contained HTML file; strings from the log cannot become markup."""

import json
import re
import subprocess
import sys
from pathlib import Path

from history_data import failing_evidence, record, write

from open_agent_compiler.history.report_html import safe_json, turn_calls

OAC = str(Path(sys.executable).with_name("oac"))
HOSTILE = "</script><script>window.pwned=1</script>\u2028<b>&amp;"


def test_safe_json_cannot_close_a_script_element() -> None:
    text = safe_json({"name": HOSTILE})
    assert "<" not in text and ">" not in text and "&" not in text
    assert "\u2028" not in text and "\u2029" not in safe_json("\u2029")
    assert json.loads(text) == {"name": HOSTILE}  # the escapes are plain JSON: the page reads back the same text


def _report(tmp_path: Path) -> str:
    write(tmp_path / ".oac" / "test_results.jsonl", [
        record(0, "x:tool:" + HOSTILE, "fail", 0.2, name=HOSTILE, evidence=failing_evidence("<img src=x onerror=alert(1)>")),
        record(0, "x:agent:chat", "pass", 1.0, kind="agent", invoker="scripted", turns=[["lint"], ["post", "ask"]]),
    ])
    done = subprocess.run([OAC, "report"], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"oac report: wrote {tmp_path / '.oac' / 'report.html'} (")
    return (tmp_path / ".oac" / "report.html").read_text()


def test_report_is_self_contained_and_escapes_hostile_strings(tmp_path: Path) -> None:
    page = _report(tmp_path)
    assert page.count("<script") == 2  # our data block and our code; the hostile name added none
    assert "pwned" in page and "<img" not in page and "onerror=alert(1)>" not in page
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", page)  # nothing fetched from anywhere
    assert "http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'" in page
    data = json.loads(re.search(r'<script type="application/json" id="oac-data">(.*?)</script>', page, re.S).group(1))
    names = {test["name"] for test in data["tests"]}
    assert HOSTILE in names
    agent = next(test for test in data["tests"] if test["kind"] == "agent")
    assert agent["turns"] == [["lint"], ["post", "ask"]] and agent["invoker"] == "scripted"
    failing = next(test for test in data["tests"] if test["status"] == "fail")
    assert failing["fail"]["ev"] == [["answer", 0, "<img src=x onerror=alert(1)>"]]


def test_turns_of_older_records_come_from_the_expected_calls_evidence() -> None:
    evidence = [{"name": "turn 1: expected_tool_calls", "passed": True, "evidence": "lint called in order; trajectory: lint → post"},
                {"name": "turn 2: expected_tool_calls", "passed": False, "evidence": "expected call 'x' was not made; trajectory: (no calls)"}]
    assert turn_calls({"evidence": evidence}) == [["lint", "post"], []]
    assert turn_calls({"turns": [["a"], []]}) == [["a"], []]


def test_report_refuses_a_symlinked_output(tmp_path: Path) -> None:
    write(tmp_path / ".oac" / "test_results.jsonl", [record(0, "x:tool:a", "pass", 0.1)])
    victim = tmp_path / "victim.txt"
    victim.write_text("keep")
    (tmp_path / "out.html").symlink_to(victim)
    done = subprocess.run([OAC, "report", "-o", "out.html"], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and done.stderr.startswith("oac: ") and "Traceback" not in done.stderr
    assert victim.read_text() == "keep"
