"""Print the results table and write benchmarks/results/<timestamp>.json, latest.json and latest.md."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from oacbench.scenarios import Row
from oacbench.targets import Target

HEADER = ("| scenario | tests | profiles | ours s | anchor s | ours/anchor | ours MB | anchor MB | RSS ratio | runs |",
          "|---|---:|---|---:|---:|---:|---:|---:|---:|---|")


def _fmt(value: float, digits: int = 3) -> str:
    return "—" if value is None or math.isnan(value) else f"{value:.{digits}f}"


def table(rows: list[Row]) -> list[str]:
    groups: dict[tuple[str, int, str], dict[str, Row]] = {}
    for row in rows:
        groups.setdefault((row.scenario, row.tests, row.shape), {})[row.impl] = row
    lines = list(HEADER)
    for (scenario, tests, shape), impls in groups.items():
        ours, anchor = impls.get("ours"), impls.get("anchor")
        wall = [r.median_s if r else float("nan") for r in (ours, anchor)]
        rss = [r.peak_rss_kb / 1024 if r else float("nan") for r in (ours, anchor)]
        ratio = wall[0] / wall[1] if ours and anchor else float("nan")
        rss_ratio = rss[0] / rss[1] if ours and anchor and rss[1] else float("nan")
        runs = "/".join(str(len(r.walls)) for r in (ours, anchor) if r)
        flags = " ⚠" if any(r.problems for r in impls.values()) else ""
        lines.append(f"| {scenario}{flags} | {tests:,} | {shape} | {_fmt(wall[0])} | {_fmt(wall[1])} | "
                     f"{_fmt(ratio, 2)} | {_fmt(rss[0], 1)} | {_fmt(rss[1], 1)} | {_fmt(rss_ratio, 2)} | {runs} |")
    return lines


def render(rows: list[Row], targets: list[Target], checks: list[Any], notes: list[str]) -> str:
    out = ["## Results (wall = median of the runs; RSS = peak over the runs)", "", *table(rows), "",
           "## Targets", ""]
    out += [f"- **{t.verdict}** {t.name}: {t.detail}" for t in targets]
    out += ["", "## Checks", ""]
    out += [f"- **{'OK' if c.ok else 'FAILED'}** {c.name}: {c.detail}" for c in checks]
    problems = [f"- {r.scenario} N={r.tests} {r.shape} {r.impl}: {p}" for r in rows for p in r.problems[:3]]
    if problems:
        out += ["", "## Problems (runs whose exit code or counts were not as expected)", "", *problems]
    if notes:
        out += ["", "## Notes", "", *(f"- {n}" for n in notes)]
    return "\n".join(out) + "\n"


def write(results_dir: Path, stamp: str, payload: dict[str, Any], markdown: str) -> Path:
    results_dir.mkdir(parents=True, exist_ok=True)
    text = json.dumps(payload, indent=1, ensure_ascii=False) + "\n"
    stamped = results_dir / f"{stamp}.json"
    stamped.write_text(text, encoding="utf-8")
    (results_dir / "latest.json").write_text(text, encoding="utf-8")
    (results_dir / "latest.md").write_text(markdown, encoding="utf-8")
    return stamped
