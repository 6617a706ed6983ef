"""`oac report --coverage FACTORY --config NAME` on the quickstart: the Coverage section, rendered in a real
headless Chromium, shows every grant with its tests and the uncovered ones as UNCOVERED."""

import shutil
import subprocess
import sys
from pathlib import Path

from cdp import Browser
from test_report_browser import _leftovers, chromium

REPO = Path(__file__).resolve().parents[2]
OAC = str(Path(sys.executable).with_name("oac"))


def test_report_shows_the_coverage_section(tmp_path: Path) -> None:
    binary = chromium()
    root = tmp_path / "quickstart"
    shutil.copytree(REPO / "examples" / "quickstart", root, ignore=shutil.ignore_patterns(".oac", "__pycache__"))
    for args in (["test", "agents:registry", "--config", "prod"],
                 ["report", "--coverage", "agents:registry", "--config", "prod", "-o", "report.html"]):
        done = subprocess.run([OAC, *args], cwd=root, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
    browser = Browser(binary)
    try:
        browser.open_page()
        browser.navigate((root / "report.html").as_uri())
        rows = browser.evaluate("Array.from(document.querySelectorAll('#coverage tr')).map(function(r){"
                                "return Array.from(r.cells).map(function(c){return c.textContent}).join('|')})")
        assert len(rows) == 10
        assert ("primary|permission|deny|write|checks capability:primary::write-off-by-default (pass)") in rows
        assert "primary|permission|deny|edit|UNCOVERED" in rows
        assert browser.evaluate("document.querySelector('#coverage .meta').textContent") == \
            "config prod: 3/10 grants covered (30%)"
        assert browser.console_errors() == []
    finally:
        browser.close()
    assert _leftovers(browser.profile) == []


def test_report_without_coverage_has_no_section(tmp_path: Path) -> None:
    root = tmp_path / "quickstart"
    shutil.copytree(REPO / "examples" / "quickstart", root, ignore=shutil.ignore_patterns(".oac", "__pycache__"))
    subprocess.run([OAC, "test", "agents:registry", "--config", "prod"], cwd=root, capture_output=True, timeout=120)
    done = subprocess.run([OAC, "report", "-o", "r.html"], cwd=root, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert '"coverage":' not in (root / "r.html").read_text()
