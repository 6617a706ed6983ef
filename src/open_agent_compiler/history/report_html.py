"""`oac report`: the test history as one self-contained HTML page (inline CSS and JS, charts as inline SVG, no
network). Every string from the log (names, evidence, tool names) reaches the page as JSON data inside a
`<script type="application/json">` block with `<`, `>`, `&` and U+2028/U+2029 escaped, and is put into the
document with `textContent` only: a hostile test name is shown as text, never parsed as markup."""

import json
import math
import re
from datetime import datetime
from typing import Any

from open_agent_compiler.history.views import STATUSES, History, TestHistory, first_failure

MAX_POINTS = 60  # per test: the latest records drawn in its status strip and duration trend
MAX_EVIDENCE = 2000  # characters of one evaluator's evidence kept in the page
_STATUS_CODE = {status: index for index, status in enumerate(STATUSES)}
_TURN_EVIDENCE = re.compile(r"^turn (\d+): expected_tool_calls$")


_SURROGATE = re.compile("[\ud800-\udfff]")


def _finite(value: Any) -> Any:
    """The value with every infinite or NaN number as 0 (JSON has no Infinity: one would blank the page; the
    page does arithmetic on every number it holds)."""
    if isinstance(value, float):
        return value if math.isfinite(value) else 0.0
    if isinstance(value, dict):
        return {key: _finite(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(item) for item in value]
    return value


def safe_json(value: Any) -> str:
    """JSON that cannot end or open a tag inside `<script>`: `<`, `>`, `&`, U+2028, U+2029 as \\u escapes; a
    lone surrogate (from a log line) as its \\u escape, so the page encodes as UTF-8; no Infinity or NaN."""
    try:
        text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    except ValueError:  # a non-finite number somewhere (rare: the walk only then)
        text = json.dumps(_finite(value), ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    text = _SURROGATE.sub(lambda found: f"\\u{ord(found.group()):04x}", text)
    return (text.replace("&", "\\u0026").replace("<", "\\u003c").replace(">", "\\u003e")
            .replace("\u2028", "\\u2028").replace("\u2029", "\\u2029"))


def _clip(text: Any) -> str:
    text = str(text)
    return text if len(text) <= MAX_EVIDENCE else text[:MAX_EVIDENCE] + "…"


def _evidence(record: dict[str, Any]) -> list[list[Any]]:
    """[name, passed (1/0/-1 skipped), evidence] per evaluator of one record."""
    rows = []
    for item in record.get("evidence") or ():
        if isinstance(item, dict):
            state = -1 if item.get("skipped") else int(bool(item.get("passed")))
            rows.append([_clip(item.get("name", "?")), state, _clip(item.get("evidence", ""))])
    if record.get("skip_reason"):
        rows.append(["skip reason", -1, _clip(record["skip_reason"])])
    return rows


def turn_calls(record: dict[str, Any]) -> list[list[str]]:
    """The tool calls of each turn of an agent test's record: its `turns` field, else (older records) what the
    `turn N: expected_tool_calls` evidence quotes as the trajectory."""
    turns = record.get("turns")
    if isinstance(turns, list):
        return [[str(name) for name in turn] if isinstance(turn, list) else [] for turn in turns]
    found: dict[int, list[str]] = {}
    for item in record.get("evidence") or ():
        match = _TURN_EVIDENCE.match(str(item.get("name", ""))) if isinstance(item, dict) else None
        if match:
            _, _, trajectory = str(item.get("evidence", "")).rpartition("trajectory: ")
            calls = [] if trajectory in ("", "(no calls)") else trajectory.split(" → ")
            found[int(match.group(1))] = calls
    return [found.get(index, []) for index in range(1, max(found) + 1)] if found else []


def _test_data(test: TestHistory) -> dict[str, Any]:
    data: dict[str, Any] = {
        "id": test.test_id, "name": test.name, "kind": test.kind, "target": test.target, "status": test.status,
        "d": round(test.duration_s, 4), "n": len(test.points),
        "h": [[run, _STATUS_CODE.get(status, 1), round(duration, 4)] for run, status, duration in
              test.points[-MAX_POINTS:]],
    }
    # only when set (the page reads a missing one as "" / false): ~8 % of a 5,000-test page
    if test.invoker:
        data["invoker"] = test.invoker
    if test.flaky:
        data["flaky"] = True
    if test.last_failure is not None:
        data["fail"] = {"at": str(test.last_failure.get("timestamp", "")), "ev": _evidence(test.last_failure)}
    if test.kind == "agent":
        data["turns"] = turn_calls(test.last)
    return data


def report_data(history: History) -> dict[str, Any]:
    return {
        "generated": datetime.now().astimezone().isoformat(timespec="seconds"),
        "results": str(history.path), "records": history.records, "statuses": list(STATUSES),
        "saved": round(history.saved_s, 3),
        "runs": [[run.run_id, run.finished, *(run.counts[s] for s in STATUSES), run.skipped_green,
                  round(run.saved_s, 3), round(run.duration_s, 3)] for run in history.runs],
        # failing tests first: a failing pipeline's reader finds them on the first screen
        "tests": [_test_data(test) for test in sorted(history.tests.values(),
                                                      key=lambda t: (t.status != "fail", t.test_id))],
        "pipeline": _pipeline_data(history),
    }


def _pipeline_data(history: History) -> dict[str, Any] | None:
    """The latest pipeline (its shards totalled, `history.pipelines`) for the page's headline."""
    from open_agent_compiler.history.pipelines import last_pipeline  # a seam: pipelines reads history.views

    pipeline = last_pipeline(history)
    if pipeline is None:
        return None
    return {"id": pipeline.pipeline_id, "shards": pipeline.shards, "commits": pipeline.commits,
            "finished": pipeline.finished, "counts": [pipeline.counts[s] for s in STATUSES],
            "skipped_green": pipeline.skipped_green, "saved": round(pipeline.saved_s, 3),
            "failed": [[test.test_id, test.name, first_failure(test.last.get("evidence")), test.last.get("file"),
                        test.last.get("line")] for test in pipeline.failing]}


def render(history: History, coverage: dict[str, Any] | None = None) -> str:
    """The page; `coverage` (`oac coverage --format json`'s data) adds its Coverage section."""
    data = report_data(history)
    if coverage is not None:
        data["coverage"] = coverage
    return _PAGE.replace("/*DATA*/", safe_json(data))


_PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:">
<title>oac test report</title>
<style>
body{font:14px/1.4 system-ui,sans-serif;margin:1.2em 2em;color:#1d2330;background:#fff}
h1{font-size:1.4em;margin:0 0 .2em}h2{font-size:1.1em;margin:1.4em 0 .4em}
.meta{color:#5a6372}.num{font-variant-numeric:tabular-nums;text-align:right}
table{border-collapse:collapse;width:100%}th,td{padding:3px 8px;border-bottom:1px solid #e3e6eb;vertical-align:top}
th{text-align:left;background:#f4f6f9;position:sticky;top:0}
.st{font-weight:600;border-radius:3px;padding:0 5px;font-size:12px}
.s-pass{background:#d7f3dc;color:#17692a}.s-fail{background:#fbd9d9;color:#9c1c1c}
.s-skipped{background:#eceff3;color:#4b5563}.s-not_runnable{background:#fdf0cf;color:#7a5a00}
.flaky{background:#f5e1ff;color:#6b2192;border-radius:3px;padding:0 5px;font-size:12px;margin-left:4px}
.name{cursor:pointer;color:#1a4fa0}.name:hover{text-decoration:underline}
.detail td{background:#fafbfc}.ev{white-space:pre-wrap;font-family:ui-monospace,monospace;font-size:12px;margin:2px 0}
.ev-fail{color:#9c1c1c}.ev-pass{color:#17692a}.ev-skip{color:#6b7280}
.bar{display:flex;gap:1em;align-items:center;flex-wrap:wrap;margin:.4em 0}
#filter{font:inherit;padding:4px 8px;width:22em}.hidden{display:none}
.cards{display:flex;gap:1em;flex-wrap:wrap}.card{border:1px solid #e3e6eb;border-radius:6px;padding:.5em 1em}
.card b{display:block;font-size:1.3em}.turns{margin:4px 0 0 0;padding-left:1.4em}
</style></head><body>
<h1>oac test report</h1>
<div class="meta" id="meta"></div>
<div class="cards" id="cards"></div>
<div id="failing"></div>
<h2>Runs</h2>
<div id="runchart"></div>
<table id="runs"><thead><tr><th>run</th><th>finished</th><th class="num">pass</th><th class="num">fail</th>
<th class="num">skipped</th><th class="num">not runnable</th><th class="num">skipped green</th>
<th class="num">time saved</th><th class="num">time run</th></tr></thead><tbody></tbody></table>
<h2>Tests</h2>
<div class="bar"><input id="filter" type="search" placeholder="filter by name, id, kind, invoker" aria-label="filter">
<span id="statusfilters"></span><label><input type="checkbox" id="onlyflaky"> flaky only</label>
<span class="meta" id="shown"></span></div>
<table id="tests"><thead><tr><th>status</th><th>test</th><th>kind</th><th>invoker</th><th>history</th>
<th>duration trend</th><th class="num">last</th></tr></thead><tbody></tbody></table>
<div id="coverage"></div>
<script type="application/json" id="oac-data">/*DATA*/</script>
<script>
"use strict";
(function () {
  var D = JSON.parse(document.getElementById("oac-data").textContent);
  var SVG = "http://www.w3.org/2000/svg", LIMIT = 500, COLORS = ["#2e9d46", "#d33a3a", "#9aa3ae", "#d9a400"];
  function el(tag, text, cls) { var e = document.createElement(tag); if (text !== undefined && text !== null) e.textContent = String(text); if (cls) e.className = cls; return e; }
  function svg(tag, attrs) { var e = document.createElementNS(SVG, tag); for (var k in attrs) e.setAttribute(k, attrs[k]); return e; }
  function secs(v) { return v >= 3600 ? (v / 3600).toFixed(1) + " h" : v >= 60 ? (v / 60).toFixed(1) + " min" : v.toFixed(2) + " s"; }
  function badge(status) { return el("span", status.replace("_", " "), "st s-" + status); }
  var runs = D.runs, last = runs.length ? runs[runs.length - 1] : null;
  if (D.coverage) {  // oac report --coverage: a row per grant, its tests or "uncovered"
    var C = D.coverage, box = document.getElementById("coverage"), ct = el("table");
    box.appendChild(el("h2", "Coverage")); box.appendChild(el("div", "config " + C.config + ": " + C.covered + "/" + C.total + " grants covered (" + C.percent + "%)", "meta"));
    C.agents.forEach(function (a) { a.grants.forEach(function (g) {
      var tr = el("tr"), refs = g.checked_by.map(function (r) { return "checks " + r.test_id + " (" + r.status + ")"; }).concat(g.exercised_by.map(function (r) { return "exercises " + r.test_id + " (" + r.status + ")"; }));
      [a.agent, g.kind, g.action, g.name].forEach(function (v) { tr.appendChild(el("td", v)); });
      tr.appendChild(el("td", g.covered ? refs.join("; ") : "UNCOVERED", g.covered ? "" : "ev-fail")); ct.appendChild(tr); }); });
    box.appendChild(ct);
  }
  document.getElementById("meta").textContent = D.results + " \\u2014 " + D.records + " records, " + runs.length + " runs, " + D.tests.length + " tests; generated " + D.generated;
  var cards = document.getElementById("cards");
  function card(label, value) { var c = el("div", null, "card"); c.appendChild(el("b", value)); c.appendChild(el("span", label)); cards.appendChild(c); }
  var P = D.pipeline;
  if (P) {
    card("failed, last pipeline", P.counts[1]); card("passed, last pipeline", P.counts[0]);
    card("skipped green, last pipeline", P.skipped_green); card("time saved, last pipeline", secs(P.saved));
    var where = document.getElementById("failing");
    where.appendChild(el("div", "pipeline " + P.id + (P.shards.length ? " \u2014 shards " + P.shards.join(", ") : "") + (P.commits.length ? " \u2014 commit " + P.commits.join(", ").slice(0, 40) : "") + " \u2014 finished " + P.finished, "meta"));
    if (P.failed.length) {
      where.appendChild(el("h2", "Failed in the last pipeline (" + P.failed.length + ")"));
      var ul = el("ul");
      P.failed.forEach(function (f) { var li = el("li", null, "failed-test"); li.appendChild(badge("fail")); li.appendChild(el("b", " " + f[1])); li.appendChild(el("span", " " + f[0] + (f[3] ? " (" + f[3] + ":" + f[4] + ")" : "") + ": " + f[2], "ev ev-fail")); ul.appendChild(li); });
      where.appendChild(ul);
    }
  } else if (last) { card("passed, last run", last[2]); card("failed, last run", last[3]); card("skipped green, last run", last[6]); }
  card("flaky tests", D.tests.filter(function (t) { return t.flaky; }).length);
  card("time saved by skipping", secs(D.saved));
  // runs: stacked bars (pass, fail, skipped, not runnable) and a table of the latest 100
  var shownRuns = runs.slice(-100), W = Math.max(300, shownRuns.length * 8), H = 80;
  var peak = Math.max.apply(null, [1].concat(shownRuns.map(function (r) { return r[2] + r[3] + r[4] + r[5]; })));
  var chart = svg("svg", {width: W, height: H, viewBox: "0 0 " + W + " " + H, role: "img", "aria-label": "records per run"});
  shownRuns.forEach(function (r, i) {
    var y = H;
    for (var s = 0; s < 4; s++) { var h = r[2 + s] / peak * (H - 4); if (h > 0) { y -= h; chart.appendChild(svg("rect", {x: i * 8, y: y, width: 6, height: h, fill: COLORS[s]})); } }
  });
  document.getElementById("runchart").appendChild(chart);
  var runBody = document.querySelector("#runs tbody");
  shownRuns.slice().reverse().forEach(function (r) {
    var tr = el("tr"); tr.appendChild(el("td", r[0])); tr.appendChild(el("td", r[1]));
    [r[2], r[3], r[4], r[5], r[6]].forEach(function (v) { tr.appendChild(el("td", v, "num")); });
    tr.appendChild(el("td", secs(r[7]), "num")); tr.appendChild(el("td", secs(r[8]), "num")); runBody.appendChild(tr);
  });
  // tests
  function strip(t) {
    var s = svg("svg", {width: 6 * t.h.length, height: 14, role: "img", "aria-label": "status over time"});
    t.h.forEach(function (p, i) { var r = svg("rect", {x: i * 6, y: 2, width: 5, height: 10, fill: COLORS[p[1]]}); var tt = svg("title", {}); tt.textContent = "run " + runs[p[0]][0] + ": " + D.statuses[p[1]] + ", " + p[2] + " s"; r.appendChild(tt); s.appendChild(r); });
    return s;
  }
  function trend(t) {
    var w = 120, h = 20, s = svg("svg", {width: w, height: h, role: "img", "aria-label": "duration trend"});
    var ds = t.h.map(function (p) { return p[2]; }), top = Math.max.apply(null, [1e-9].concat(ds));
    var step = ds.length > 1 ? (w - 2) / (ds.length - 1) : 0;
    var pts = ds.map(function (d, i) { return (1 + i * step).toFixed(1) + "," + (h - 2 - d / top * (h - 4)).toFixed(1); }).join(" ");
    s.appendChild(svg("polyline", {points: pts, fill: "none", stroke: "#1a4fa0", "stroke-width": 1.5}));
    return s;
  }
  function detail(t) {
    var tr = el("tr", null, "detail hidden"), td = el("td"); td.colSpan = 7; tr.appendChild(td);
    td.appendChild(el("div", "id: " + t.id + " \\u2014 target: " + t.target + " \\u2014 " + t.n + " records", "meta"));
    if (t.fail) {
      td.appendChild(el("div", "last failure (" + t.fail.at + "):"));
      t.fail.ev.forEach(function (e) { td.appendChild(el("div", e[0] + ": " + e[2], "ev " + (e[1] === 1 ? "ev-pass" : e[1] === 0 ? "ev-fail" : "ev-skip"))); });
    } else { td.appendChild(el("div", "no failure recorded", "meta")); }
    if (t.turns && t.turns.length) {
      td.appendChild(el("div", "tool calls per turn (latest run):"));
      var ol = el("ol", null, "turns");
      t.turns.forEach(function (calls) { ol.appendChild(el("li", calls.length ? calls.join(" \\u2192 ") : "(no calls)")); });
      td.appendChild(ol);
    }
    return tr;
  }
  var body = document.querySelector("#tests tbody");
  function buildRow(t) {  // built when first shown: a 5,000-test history draws only the rows on screen
    var tr = el("tr", null, "test"); tr.dataset.status = t.status;
    var st = el("td"); st.appendChild(badge(t.status)); tr.appendChild(st);
    var nm = el("td"), a = el("span", t.name, "name"); nm.appendChild(a);
    if (t.flaky) nm.appendChild(el("span", "flaky", "flaky"));
    tr.appendChild(nm); tr.appendChild(el("td", t.kind)); tr.appendChild(el("td", t.invoker || ""));
    var hs = el("td"); hs.appendChild(strip(t)); tr.appendChild(hs);
    var tdT = el("td"); tdT.appendChild(trend(t)); tr.appendChild(tdT);
    tr.appendChild(el("td", secs(t.d), "num"));
    var entry = {tr: tr, detail: null};
    a.addEventListener("click", function () {
      if (!entry.detail) { entry.detail = detail(t); tr.after(entry.detail); }
      entry.detail.classList.toggle("hidden");
    });
    return entry;
  }
  var rows = D.tests.map(function (t) {
    return {t: t, text: (t.name + " " + t.id + " " + t.kind + " " + (t.invoker || "") + " " + t.target).toLowerCase(), built: null};
  });
  var wanted = {}, filters = document.getElementById("statusfilters");
  D.statuses.forEach(function (s) {
    wanted[s] = true; var l = el("label"), c = el("input"); c.type = "checkbox"; c.checked = true; c.id = "show-" + s;
    c.addEventListener("change", function () { wanted[s] = c.checked; apply(); });
    l.appendChild(c); l.appendChild(document.createTextNode(" " + s.replace("_", " ") + " ")); filters.appendChild(l);
  });
  var box = document.getElementById("filter"), onlyFlaky = document.getElementById("onlyflaky");
  function apply() {
    var q = box.value.trim().toLowerCase(), matched = 0, frag = document.createDocumentFragment();
    while (body.firstChild) body.removeChild(body.firstChild);
    rows.forEach(function (row) {
      var ok = wanted[row.t.status] !== false && (!onlyFlaky.checked || row.t.flaky) && (!q || row.text.indexOf(q) >= 0);
      if (!ok) return;
      matched++;
      if (matched > LIMIT) return;
      if (!row.built) row.built = buildRow(row.t);
      frag.appendChild(row.built.tr); if (row.built.detail) frag.appendChild(row.built.detail);
    });
    body.appendChild(frag);
    document.getElementById("shown").textContent = matched > LIMIT ? "showing " + LIMIT + " of " + matched + " matching tests: narrow the filter" : matched + " of " + rows.length + " tests";
  }
  box.addEventListener("input", apply); onlyFlaky.addEventListener("change", apply);
  apply();
})();
</script></body></html>
"""
