"""The issue's targets, checked against the rows of one run. A target with no data is reported, not passed."""

from __future__ import annotations

import math
import statistics

from dataclasses import dataclass
from typing import Any

from oacbench.scenarios import (
    EMPTY_HISTORY, HISTORY_LINES, INTERLEAVED_WARM, LIST, LIST_PAIRED_WARM, LONG_HISTORY, PAIRED_WARM, Row,
)

TARGET_TESTS = 5_000
FLAT_FROM = 1_000  # the first size of the flatness target
FLAT_FACTOR = 1.25  # "flat": the marginal cost per test may grow by at most 25 % from 1,000→5,000 to the largest N


@dataclass
class Target:
    name: str
    ok: bool | None  # None: no data
    detail: str

    @property
    def verdict(self) -> str:
        return "PASS" if self.ok else ("MISS" if self.ok is False else "NO DATA")

    def as_dict(self) -> dict[str, Any]:
        return {"name": self.name, "verdict": self.verdict, "detail": self.detail}


class Rows:
    def __init__(self, rows: list[Row]) -> None:
        self.rows = rows

    def get(self, scenario: str, tests: int, shape: str, impl: str) -> Row | None:
        for row in self.rows:
            if (row.scenario, row.tests, row.shape, row.impl) == (scenario, tests, shape, impl) and row.walls:
                return row
        return None

    def startswith(self, prefix: str, tests: int, shape: str, impl: str) -> Row | None:
        for row in self.rows:
            if row.scenario.startswith(prefix) and (row.tests, row.shape, row.impl) == (tests, shape, impl):
                return row
        return None

    def shapes(self) -> list[str]:
        return list(dict.fromkeys(row.shape for row in self.rows if row.tests == TARGET_TESTS))


def _ratio_target(name: str, ours: Row | None, other: Row | None, limit: float, what: str) -> Target:
    if ours is None or other is None:
        return Target(name, None, "not measured in this run")
    ratio = ours.median_s / other.median_s
    return Target(name, ratio <= limit,
                  f"ours {ours.median_s:.3f}s / {what} {other.median_s:.3f}s = {ratio:.2f} (limit {limit:.2f})")


def evaluate(all_rows: list[Row], edit_checks_ok: dict[str, bool]) -> list[Target]:
    rows, n = Rows(all_rows), TARGET_TESTS
    found: list[Target] = []
    for shape in rows.shapes():
        tag = f"[{n:,} tests, {shape} profiles]"
        found.append(_ratio_target(f"warm ≤ 0.30 × anchor warm {tag}", rows.get("warm", n, shape, "ours"),
                                   rows.get("warm", n, shape, "anchor"), 0.30, "anchor"))
        found.append(_ratio_target(f"cold ≤ 0.75 × anchor cold {tag}", rows.get("cold", n, shape, "ours"),
                                   rows.get("cold", n, shape, "anchor"), 0.75, "anchor"))
        for scenario in ("cold", "warm"):
            ours, anchor = rows.get(scenario, n, shape, "ours"), rows.get(scenario, n, shape, "anchor")
            name = f"peak RSS ≤ anchor's, {scenario} {tag}"
            if ours is None or anchor is None:
                found.append(Target(name, None, "not measured in this run"))
            else:
                found.append(Target(name, ours.peak_rss_kb <= anchor.peak_rss_kb,
                                    f"ours {ours.peak_rss_kb / 1024:.1f} MB vs anchor {anchor.peak_rss_kb / 1024:.1f} MB"
                                    f" = {ours.peak_rss_kb / anchor.peak_rss_kb:.2f}×"))
        edit = rows.startswith("edit 1 agent", n, shape, "ours")
        if edit is not None:
            target = _ratio_target(f"one agent of 1,000 edited ≤ 1.1 × our warm {tag}", edit,
                                   rows.get(PAIRED_WARM, n, shape, "ours"), 1.10, "our warm (interleaved)")
            only = edit_checks_ok.get(edit.case, False)
            target.ok = bool(target.ok) and only
            target.detail += "; only that agent's tests ran" if only else "; OTHER TESTS RAN TOO (see checks)"
            found.append(target)
        hist = rows.get(LONG_HISTORY, n, shape, "ours")
        if hist is not None:
            found.append(_ratio_target(f"warm after {HISTORY_LINES:,}-line history within 5 % of empty {tag}", hist,
                                       rows.get(EMPTY_HISTORY, n, shape, "ours"), 1.05,
                                       "our warm with empty history (interleaved)"))
        listing = rows.get(LIST, n, shape, "ours")
        if listing is not None:
            found.append(_ratio_target(f"--list ≤ 1.0 × our warm {tag}", listing,
                                       rows.get(LIST_PAIRED_WARM, n, shape, "ours"), 1.0, "our warm (interleaved)"))
    found.extend(_compile_targets(all_rows))
    found.extend(_parallel_targets(all_rows))
    found.extend(_flat_targets(rows))
    found.extend(cassette_targets(all_rows))
    return found


CASSETTE_LIMIT = 1.0  # issue 35: a replayed agent test costs no more than the scripted one
CASSETTE_RESOLUTION = 0.10  # an interval reaching past 1.10 cannot tell "no more" from 10 % more: no verdict


def median_interval(values: list[float], confidence: float = 0.95) -> tuple[float, float] | None:
    """A distribution-free interval for the median (from the sign test: order statistics k and n+1-k, with k
    the largest whose binomial tail stays within the error on each side); None when too few values (n < 6)."""
    n, ordered = len(values), sorted(values)
    tail, k = 0.0, 0
    for index in range(n + 1):
        tail += math.comb(n, index) / 2 ** n  # P(fewer than index + 1 values below the median)
        if tail > (1 - confidence) / 2:
            k = index
            break
    return (ordered[k - 1], ordered[n - k]) if k >= 1 else None


def cassette_targets(rows: list[Row]) -> list[Target]:
    """Per harness: is the replayed agent test measurably dearer than the scripted one? Pairs run interleaved, the
    copies swapping roles; on the pairs' ratios (replayed / scripted), a 95 % interval for their median: MISS when
    it lies above 1.0 (the replay costs more), no verdict (MISS) when it is too wide to tell, else PASS. Two runs
    of equal cost pass 97.5 % of the time, where a limit on the median alone passes half of them."""
    found = []
    for row in rows:
        if row.scenario.startswith("agent test via ") and row.scenario.endswith(", replayed from its cassette"):
            harness = row.scenario.split()[3].rstrip(",")
            scripted = next((r for r in rows if r.scenario == f"agent test via {harness}, scripted"), None)
            name = f"replayed agent test ≤ {CASSETTE_LIMIT:.2f} × scripted [{harness}, three turns]"
            problems = row.problems + (scripted.problems if scripted else [])
            if problems:
                found.append(Target(name, False, f"runs did not pass: {problems[:2]}"))
                continue
            if not row.walls or scripted is None or len(scripted.walls) != len(row.walls):
                found.append(Target(name, None, "not measured in this run"))
                continue
            ratios = [replayed / alone for replayed, alone in zip(row.walls, scripted.walls)]
            interval = median_interval(ratios)
            shown = (f"median of {len(ratios)} paired ratios {statistics.median(ratios):.3f}, 95 % interval "
                     + (f"{interval[0]:.3f}–{interval[1]:.3f}" if interval else "none (under 6 pairs)")
                     + f"; ratio of medians {row.median_s:.3f}s / {scripted.median_s:.3f}s = "
                     f"{row.median_s / scripted.median_s:.3f}; pairs under 1: {sum(r <= 1 for r in ratios)} of "
                     f"{len(ratios)}")
            if interval is None:
                found.append(Target(name, None, f"too few pairs for a verdict: {shown}"))
            elif interval[0] > CASSETTE_LIMIT:
                found.append(Target(name, False, f"the replay costs more: {shown}"))
            elif interval[1] > CASSETTE_LIMIT + CASSETTE_RESOLUTION:
                found.append(Target(name, False, f"undecided, too noisy (interval past "
                                                 f"{CASSETTE_LIMIT + CASSETTE_RESOLUTION:.2f}; more reps): {shown}"))
            else:
                found.append(Target(name, True, f"not measurably dearer: {shown}"))
    return found


COMPILE_LIMITS = {"compile cold": 0.75, "compile unchanged": 0.25}  # issue 18; "one agent edited" has no target


def _compile_targets(rows: list[Row]) -> list[Target]:
    found = []
    for row in rows:
        kind = row.scenario.split(",")[0]
        if row.impl == "ours" and kind in COMPILE_LIMITS:
            anchor = Rows(rows).get(row.scenario, row.tests, row.shape, "anchor")
            found.append(_ratio_target(f"{kind} ≤ {COMPILE_LIMITS[kind]:.2f} × anchor [{row.scenario.split(', ', 1)[1]}]",
                                       row, anchor, COMPILE_LIMITS[kind], "anchor"))
    return found


def _parallel_targets(rows: list[Row]) -> list[Target]:
    found = []
    for row in rows:
        if row.impl == "ours" and row.scenario.startswith("-n "):
            kind = row.scenario.split(", ", 1)[1]
            serial = Rows(rows).get(f"serial, {kind}", row.tests, row.shape, "ours")
            found.append(_ratio_target(f"{row.scenario.split(',')[0]} ≤ 0.55 × serial [{row.tests:,} {kind}]",
                                       row, serial, 0.55, "serial"))
    return found


def _flat_targets(rows: Rows) -> list[Target]:
    found = []
    for scenario in ("cold", "warm"):
        for shape in ("per-agent", "shared"):
            def points_of(name: str) -> list[tuple[int, float]]:
                return sorted((r.tests, r.median_s) for r in rows.rows
                              if (r.scenario, r.shape, r.impl) == (name, shape, "ours") and r.tests >= FLAT_FROM)
            points = points_of(scenario)
            if scenario == "warm" and len(points_of(INTERLEAVED_WARM)) >= 3:  # sizes measured side by side
                points, scenario = points_of(INTERLEAVED_WARM), INTERLEAVED_WARM
            if len(points) < 3:
                continue
            slopes = [(b[1] - a[1]) / (b[0] - a[0]) * 1e3 for a, b in zip(points, points[1:])]
            per_test = ", ".join(f"{t:,}: {s / t * 1e3:.3f}" for t, s in points)
            steps = ", ".join(f"{a[0]:,}→{b[0]:,}: {s:.3f}" for (a, b), s in zip(zip(points, points[1:]), slopes))
            worst, first = max(slopes[1:]), max(slopes[0], 1e-9)
            found.append(Target(
                f"time per test flat from {points[0][0]:,} to {points[-1][0]:,} [ours {scenario}, {shape}]",
                worst <= FLAT_FACTOR * first,
                f"ms per test (total/N) {per_test}; marginal ms per added test {steps}; "
                f"worst/first = {worst / first:.2f} (limit {FLAT_FACTOR})",
            ))
    return found
