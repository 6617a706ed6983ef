"""`oac report` in a real headless Chromium (Debian `chromium`, installed by .ci/run), driven over the DevTools
protocol: it renders with no console error, lists the tests, the filter box narrows the table, a failing test
shows its evidence, a test name holding `<script>` is shown as text. It also takes the docs' screenshot.

Skipped with the reason where Chromium is not installed; failing instead when CI is set. The screenshot is
written to docs/img/report.png when that file is missing or OAC_UPDATE_SCREENSHOT=1 (so a test run never
rewrites a committed file unasked); otherwise to the test's tmp dir."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from cdp import Browser, find_chromium
from history_data import failing_evidence, record, write

REPO = Path(__file__).resolve().parents[2]
OAC = str(Path(sys.executable).with_name("oac"))
HOSTILE = "<script>window.pwned=1</script> renders as text"
DOCS_IMAGE = REPO / "docs" / "img" / "report.png"


def chromium() -> str:
    binary = find_chromium()
    if binary is None:
        reason = "Chromium is not installed (Debian: apt-get install chromium chromium-driver; .ci/run does it)"
        if os.environ.get("CI"):
            pytest.fail(f"CI is set and {reason}")
        pytest.skip(reason)
    return binary


def project_history(root: Path) -> Path:
    """A review desk's history over 12 runs: edits re-run a few tests each time, one flaky test, one failing now,
    an agent test run by the scripted invoker, and a test whose name tries to inject a script."""
    records = []
    tests = [("review-desk:tool:lint-py-real", 0.42), ("review-desk:tool:post-comment-mock", 0.03),
             ("review-desk:capability:may-run-linters", 0.01), ("review-desk:capability:no-push", 0.01),
             ("review-desk:tool:fetch-diff-sequence", 0.05), ("review-desk:agent:three-turn-review", 1.8)]
    for run in range(12):
        for number, (test, duration) in enumerate(tests):
            if run and (run + number) % 3:
                continue  # green and unchanged: skipped by key in this run
            kind = test.split(":")[1]
            extra = {"kind": kind, "duration": duration * (1 + 0.15 * ((run * 7 + number) % 5)), "minutes": number}
            if kind == "agent":
                records.append(record(run, test, "pass", extra["duration"], kind=kind, invoker="scripted",
                                      turns=[["fetch-diff"], ["lint-py", "lint-py"], ["post-comment"]],
                                      minutes=number))
            else:
                records.append(record(run, test, "pass", extra["duration"], kind=kind, minutes=number))
        records.append(record(run, "review-desk:tool:flaky-clock", "fail" if run % 4 == 1 else "pass", 0.2,
                              key="same-key", minutes=7,
                              evidence=failing_evidence("expected '09:00', got '09:01'") if run % 4 == 1 else None))
    records.append(record(11, "review-desk:tool:summarise-real", "fail", 0.9, minutes=8,
                          evidence=failing_evidence("expected 'APPROVE', got 'REQUEST_CHANGES' (lint found 2 issues)")))
    records.append(record(11, "review-desk:tool:" + HOSTILE, "pass", 0.02, name=HOSTILE, minutes=9))
    return write(root / ".oac" / "test_results.jsonl", records)


def _leftovers(profile: str) -> list[str]:
    found = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and profile.encode() in (entry / "cmdline").read_bytes():
                found.append(entry.name)
        except OSError:
            continue
    return found


def test_report_in_headless_chromium(tmp_path: Path) -> None:
    binary = chromium()
    project_history(tmp_path)
    done = subprocess.run([OAC, "report", "-o", "report.html"], cwd=tmp_path, capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr
    page = (tmp_path / "report.html").as_uri()
    browser = Browser(binary)
    try:
        browser.open_page()
        browser.navigate(page)
        browser.send("Emulation.setDeviceMetricsOverride", {"width": 1200, "height": 760, "deviceScaleFactor": 1,
                                                            "mobile": False})
        rows = "document.querySelectorAll('#tests tbody tr.test')"
        names = f"Array.from({rows}).map(function(r){{return r.querySelector('.name').textContent}})"
        listed = browser.evaluate(names)
        assert len(listed) == 9 and "three-turn-review" in listed and "summarise-real" in listed
        assert HOSTILE in listed  # shown as its own text...
        assert browser.evaluate("typeof window.pwned") == "undefined"  # ...and never run
        assert browser.evaluate("document.querySelectorAll('script').length") == 2
        assert browser.evaluate("document.querySelector('.flaky') !== null")
        assert browser.evaluate("document.getElementById('shown').textContent") == "9 of 9 tests"
        cells = "Array.from(document.querySelectorAll('#tests tbody td')).map(function(c){return c.textContent})"
        assert not [cell for cell in browser.evaluate(cells) if "undefined" in cell]  # fields left out when unset
        assert browser.evaluate("document.querySelectorAll('#tests .flaky').length") == 1
        browser.evaluate("var f=document.getElementById('filter');f.value='undefined';"
                         "f.dispatchEvent(new Event('input'))")
        assert browser.evaluate("document.getElementById('shown').textContent") == "0 of 9 tests"
        browser.evaluate("var f=document.getElementById('filter');f.value='';f.dispatchEvent(new Event('input'))")

        browser.type_into("#filter", "real")  # typed key by key into the filter box
        assert sorted(browser.evaluate(names)) == ["lint-py-real", "summarise-real"]
        assert browser.evaluate("document.getElementById('shown').textContent") == "2 of 9 tests"

        browser.click(f"{'#tests tbody tr.test'}[data-status='fail'] .name")  # the failing test: its evidence
        evidence = browser.evaluate("Array.from(document.querySelectorAll('#tests tr.detail:not(.hidden) .ev'))"
                                    ".map(function(e){return e.textContent})")
        assert evidence == ["answer: expected 'APPROVE', got 'REQUEST_CHANGES' (lint found 2 issues)"]

        browser.evaluate("document.getElementById('show-pass').click()")  # status filter: only failing remain
        assert browser.evaluate(names) == ["summarise-real"]
        browser.evaluate("document.getElementById('show-pass').click()")

        browser.evaluate("var f=document.getElementById('filter');f.value='';f.dispatchEvent(new Event('input'))")
        # the agent test's turns, for the screenshot (the failing test is listed first, the agent test next)
        assert browser.evaluate(f"{rows}[1].querySelector('.name').textContent") == "three-turn-review"
        browser.evaluate(f"{rows}[1].querySelector('.name').click()")
        turns = browser.evaluate("Array.from(document.querySelectorAll('ol.turns li')).map(function(e){return e.textContent})")
        assert turns == ["fetch-diff", "lint-py → lint-py", "post-comment"]
        assert browser.console_errors() == []
        update = os.environ.get("OAC_UPDATE_SCREENSHOT") == "1" or not DOCS_IMAGE.exists()
        shot = DOCS_IMAGE if update else tmp_path / "report.png"
        shot.parent.mkdir(parents=True, exist_ok=True)
        browser.evaluate("window.scrollTo(0, 0)")
        browser.screenshot(shot, height=1280)
        assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 10_000
    finally:
        browser.close()
    assert _leftovers(browser.profile) == []  # the browser and all its helper processes are gone


def test_report_of_a_50000_line_history_renders_and_filters(tmp_path: Path) -> None:
    from history_data import generated

    binary = chromium()
    generated(tmp_path / ".oac" / "test_results.jsonl", 50_000)
    done = subprocess.run([OAC, "report"], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    page = tmp_path / ".oac" / "report.html"
    assert page.stat().st_size < 3 * 1024 * 1024  # 50,000 records, 5,000 tests: about 1.4 MB
    browser = Browser(binary, timeout=120)
    try:
        browser.open_page()
        browser.navigate(page.as_uri())
        shown = "document.getElementById('shown').textContent"
        assert browser.evaluate(shown) == "showing 500 of 5000 matching tests: narrow the filter"
        assert browser.evaluate("document.querySelectorAll('#tests tbody tr.test').length") == 500
        browser.type_into("#filter", "t4999")
        assert browser.evaluate(shown) == "1 of 5000 tests"
        browser.evaluate("document.getElementById('onlyflaky').click()")
        browser.evaluate("var f=document.getElementById('filter');f.value='';f.dispatchEvent(new Event('input'))")
        flaky = browser.evaluate(shown)
        assert flaky.endswith(" of 5000 tests") and 0 < int(flaky.split()[0]) < 100
        assert browser.console_errors() == []
    finally:
        browser.close()
    assert _leftovers(browser.profile) == []


def test_without_chromium_the_test_skips_with_the_reason_and_fails_under_ci(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", "/nonexistent")
    monkeypatch.delenv("CI", raising=False)
    with pytest.raises(pytest.skip.Exception, match="Chromium is not installed"):
        chromium()
    monkeypatch.setenv("CI", "1")
    with pytest.raises(pytest.fail.Exception, match="CI is set and Chromium is not installed"):
        chromium()
