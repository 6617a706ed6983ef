"""The pipeline-level view, end to end: three checkouts at three paths run the three shards of one pipeline against
one real PostgreSQL database (as three CI runners would), and the merged result tells the truth about the pipeline:
totals over the shards, failures first, merged JUnit, annotations on the failing test's definition line, time saved
only from green skips; the report opened in headless Chromium shows the failing test on its first screen."""

import json
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

from engine_project import SUMMARY, summary_line
from shared_project import clone, make

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "report"))

from cdp import Browser  # noqa: E402
from test_report_browser import chromium  # noqa: E402

SHARDS = (1, 2, 3)


def run_pipeline(runners, pipeline: str, env: dict[str, str], out: Path) -> list[Path]:
    """Each runner runs its shard of `pipeline` with its results in `out` (the artifacts a merge job downloads)."""
    files = []
    for shard, runner in zip(SHARDS, runners):
        results = out / f"{pipeline}-shard-{shard}.jsonl"
        done = runner.oac("test", "--shard", f"{shard}/3", "--pipeline", pipeline, "--results", str(results),
                          "--junit", str(out / f"{pipeline}-junit-{shard}.xml"), env=env)
        assert done.returncode in (0, 1), done.stdout + done.stderr
        files.append(results)
    return files


def beta_line(runner) -> int:
    """The line constructing the tool tests (beta-ok among them) in agents.py."""
    return next(n for n, text in enumerate((runner.root / "agents.py").read_text().splitlines(), 1)
                if "tool_tests=[ToolTest(" in text)


def test_three_shards_on_three_checkouts_give_one_truthful_pipeline_view(pg, tmp_path: Path) -> None:
    base = make(tmp_path / "base")
    # two more tools, so that each shard holds tests (by the hash of their ids: epsilon 1/3, delta 2/3, the rest 3/3)
    base.edit("agents.py", 'tool("gamma")]', 'tool("gamma"), tool("delta"), tool("epsilon")]')
    base.write("mocks.py", (base.root / "mocks.py").read_text() + "".join(
        f"\n\ndef {name}(payload):\n    _ran({name!r})\n    return {{'ok': True}}\n" for name in ("delta", "epsilon")))
    runners = [clone(base, tmp_path / name) for name in ("runner-a", "work/ci-b", "c")]
    out = tmp_path / "artifacts"
    out.mkdir()
    env = {**pg.env(pg.database), "GITHUB_ACTIONS": "true", "GITHUB_SHA": "ab" * 20}

    # a cold pipeline: every test runs in exactly one shard, beta fails
    cold = run_pipeline(runners, "p1", {**env, "BETA_FAIL": "1"}, out)
    merged = base.oac("results", "merge", *map(str, cold), "-o", str(out / "all.jsonl"), "--junit",
                      str(out / "merged.xml"), env={"GITHUB_ACTIONS": "true"})
    assert merged.returncode == 1, merged.stdout + merged.stderr
    assert summary_line(merged.stdout) == SUMMARY.format(6, 5, 1, 0, 0)
    errors = [line for line in merged.stdout.splitlines() if line.startswith("::error")]
    assert len(errors) == 1 and errors[0].startswith(
        f"::error file=agents.py,line={beta_line(base)},title=oac test tool%3Abeta%3A%3Abeta-ok::tool:beta::beta-ok: ")
    suite = ET.parse(out / "merged.xml").getroot()
    assert (suite.get("tests"), suite.get("failures"), suite.get("skipped")) == ("6", "1", "0")
    [failing] = [case for case in suite.iter("testcase") if case.find("failure") is not None]
    assert (failing.get("name"), failing.get("file"), failing.get("line")) == ("beta-ok", "agents.py",
                                                                               str(beta_line(base)))

    results = base.oac("results", "--results", str(out / "all.jsonl"), check_code=0).stdout.splitlines()
    assert results[1] == "failing (1):" and results[2].startswith(f"  - tool:beta::beta-ok (agents.py:")
    assert results[3].startswith("last pipeline p1 (3 runs; shards 1/3,2/3,3/3; commit abababababab; finished")
    assert "pass=5 fail=1 skipped=0 not_runnable=0; failed here=1; skipped green=0 (saved 0.00 s)" in results[3]
    assert results[-1].startswith("time saved by skipping green tests: 0.00 s")  # cold: nothing was skipped

    # its report: the failing test on the first screen, with every status ticked
    report = tmp_path / "report.html"
    base.oac("report", "--results", str(out / "all.jsonl"), "-o", str(report), check_code=0)
    browser = Browser(chromium())
    try:
        browser.open_page()
        browser.send("Emulation.setDeviceMetricsOverride", {"width": 1200, "height": 760, "deviceScaleFactor": 1,
                                                            "mobile": False})
        browser.navigate(report.as_uri())
        assert browser.evaluate("Array.from(document.querySelectorAll('#statusfilters input'))"
                                ".every(function(c){return c.checked})")
        visible = ("Array.from(document.querySelectorAll('*')).filter(function(e){"
                   "var r=e.getBoundingClientRect();return e.children.length===0&&r.height>0&&r.top>=0&&"
                   "r.bottom<=window.innerHeight&&e.textContent.indexOf('beta-ok')>=0}).length")
        assert browser.evaluate("window.scrollY") == 0 and browser.evaluate(visible) >= 1
        first_row = "document.querySelector('#tests tbody tr.test')"
        assert browser.evaluate(f"{first_row}.dataset.status") == "fail"
        cards = "Array.from(document.querySelectorAll('.card')).map(function(c){return c.textContent})"
        assert "1failed, last pipeline" in browser.evaluate(cards)
        assert browser.console_errors() == []
    finally:
        browser.close()

    # a warm pipeline: what another runner proved is skipped green, beta (failed) runs again and passes
    warm = run_pipeline(runners, "p2", env, out)
    merged = base.oac("results", "merge", *map(str, warm), "-o", str(out / "p2.jsonl"))
    assert merged.returncode == 0 and summary_line(merged.stdout) == SUMMARY.format(6, 1, 0, 5, 0), merged.stdout
    # the history carried forward: this pipeline's records appended to the earlier ones (beta failed under the
    # same key in p1 only because BETA_FAIL was set: a merge of both pipelines rightly calls that a conflict)
    history = out / "history.jsonl"
    history.write_text((out / "all.jsonl").read_text() + (out / "p2.jsonl").read_text())
    records = [json.loads(line) for line in history.read_text().splitlines()]
    cold_pass = {r["test_id"]: r["duration_s"] for r in records if r["pipeline"] == "p1" and r["status"] == "pass"}
    skipped = [r["test_id"] for r in records if r["pipeline"] == "p2" and r["status"] == "skipped"]
    assert sorted(skipped) == sorted(cold_pass)  # the five greens, each in its own shard
    assert {r["shard"] for r in records} == {"1/3", "2/3", "3/3"}
    document = json.loads(base.oac("results", "--results", str(history), "--format", "json",
                                   check_code=0).stdout)
    last = document["last_pipeline"]
    assert last["pipeline"] == "p2" and last["failed"] == [] and last["skipped_green"] == 5
    assert last["counts"] == {"pass": 1, "fail": 0, "skipped": 5, "not_runnable": 0}
    assert abs(last["saved_s"] - round(sum(cold_pass.values()), 3)) < 0.002
    assert abs(document["saved_s"] - last["saved_s"]) < 0.002
