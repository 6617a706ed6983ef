"""Issue 33: merge and report robustness — odd `repeat` values, conflicting duplicates in any order (a property
test with an oracle), non-finite durations, lone surrogates, and the mutation survivors of merge and report."""

import json
import math

from hypothesis import given, settings
from hypothesis import strategies as st

from open_agent_compiler.history.merge import merge
from open_agent_compiler.history.report_html import MAX_POINTS, safe_json


def rec(test="t", status="pass", at="2026-12-01T10:00:00", run="r1", key="k", **extra):
    return {"run_id": run, "test_id": test, "config": "prod", "status": status, "timestamp": at,
            "composite_hash": key, **extra}


def test_odd_repeat_values_merge_without_a_crash():
    records = [rec(repeat=value, run=f"r{index}") for index, value in enumerate(["r2", [2], 1e999, 2, None, True])]
    merged = merge([records])
    assert len(merged.records) == len(records)
    assert merged.counts["discovered"] == 1  # only the non-repeat record counts (repeat None)


def test_a_conflicting_duplicate_is_reported_in_either_order():
    passed, failed = rec(status="pass"), rec(status="fail")
    one, two = merge([[passed], [failed]]), merge([[failed], [passed]])
    assert one == two
    assert [c.test_id for c in one.conflicts] == ["t"]
    assert one.counts["fail"] == 1 and one.counts["pass"] == 0


def test_a_conflict_counts_as_failed_whichever_record_is_latest():
    # the pass is the latest record: the conflict still counts the test as failed
    merged = merge([[rec(status="fail", at="2026-12-01T10:00:00", run="a"),
                     rec(status="pass", at="2026-12-01T11:00:00", run="b")]])
    assert merged.conflicts and merged.counts == {**merged.counts, "fail": 1, "pass": 0}


def test_repeat_records_are_not_conflicts():
    records = [rec(status="pass", repeat=1), rec(status="fail", repeat=2, at="2026-12-01T10:00:01"),
               rec(status="fail", at="2026-12-01T10:00:02", flaky=True, repeats={"runs": 2, "passes": 1})]
    merged = merge([records])
    assert merged.conflicts == [] and merged.counts["flaky"] == 1


statuses = st.sampled_from(["pass", "fail", "skipped", "not_runnable"])
records = st.builds(rec, test=st.sampled_from(["a", "b"]), status=statuses,
                    at=st.sampled_from(["2026-12-01T10:00:00", "2026-12-01T11:00:00"]),
                    run=st.sampled_from(["r1", "r2"]), key=st.sampled_from(["k1", "k2"]))


@settings(max_examples=150, deadline=None)
@given(st.lists(st.lists(records, max_size=6), min_size=1, max_size=4), st.randoms())
def test_merge_is_independent_of_input_order_and_reports_every_conflict(files, random):
    shuffled = [list(f) for f in files]
    random.shuffle(shuffled)
    for f in shuffled:
        random.shuffle(f)
    first, second = merge(files), merge(shuffled)
    assert first == second  # same records, counts, conflicts, failures: the same output and exit code
    # oracle: a conflict for every (test, key) whose records hold both a pass and a fail, and for the key of each
    # record whose identity (run, test, time) both passed and failed
    seen: dict[tuple[str, str], set[str]] = {}
    twins: dict[tuple[str, str, str], set[str]] = {}
    for f in files:
        for r in f:
            seen.setdefault((r["test_id"], r["composite_hash"]), set()).add(r["status"])
            twins.setdefault((r["run_id"], r["test_id"], r["timestamp"]), set()).add(r["status"])
    expected = {where for where, found in seen.items() if {"pass", "fail"} <= found}
    expected |= {(r["test_id"], r["composite_hash"]) for f in files for r in f
                 if {"pass", "fail"} <= twins[(r["run_id"], r["test_id"], r["timestamp"])]}
    assert {(c.test_id, c.key) for c in first.conflicts} == expected
    for test_id, _ in expected:
        assert any(f[0] == test_id for f in first.failures)


def test_non_finite_numbers_and_lone_surrogates_keep_the_page_json_valid():
    text = safe_json({"d": float("inf"), "n": [float("nan"), 1.5], "name": "bad \udc80 name"})
    data = json.loads(text)  # strict JSON: no Infinity / NaN
    assert data["d"] == 0.0 and data["n"] == [0.0, 1.5] and data["name"] == "bad \udc80 name"
    text.encode("utf-8")  # the page can be written


def test_report_end_to_end_with_an_infinite_duration_and_a_surrogate(tmp_path):
    import subprocess
    import sys

    results = tmp_path / "r.jsonl"
    lines = [json.dumps(rec(status="fail", duration_s=1e999, name="x\udc80")), json.dumps(rec(test="u", duration_s=float("nan")))]
    results.write_text("\n".join(lines) + "\n", encoding="utf-8", errors="surrogatepass")
    out = tmp_path / "report.html"
    done = subprocess.run([sys.executable, "-c", "from open_agent_compiler.cli import main; main()", "report", "--results", str(results),
                           "-o", str(out)], capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    page = out.read_text(encoding="utf-8")
    start = page.index('<script type="application/json"')
    body = page[page.index(">", start) + 1:page.index("</script>", start)]
    data = json.loads(body)
    assert all(math.isfinite(t["d"]) for t in data["tests"])


def test_the_status_strip_shows_the_latest_runs():
    from open_agent_compiler.history.report_html import _test_data

    class T:
        test_id = name = "t"
        kind, target, status, duration_s, invoker, flaky, last_failure = "tool", "x", "pass", 1.0, None, False, None
        points = [(f"run{i:03d}", "pass", float(i)) for i in range(MAX_POINTS + 20)]

    strip = _test_data(T())["h"]
    assert len(strip) == MAX_POINTS and strip[-1][0] == "run079" and strip[0][0] == "run020"
