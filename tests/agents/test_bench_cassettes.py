"""The `doit bench` cassette scenario (issue 35): a replayed agent test through a real harness against the scripted
one, measured interleaved in one run (the two copies swapping roles), with a verdict on the paired ratios."""

import math
import sys
from pathlib import Path

import pytest
from hypothesis import given, strategies as st

from agent_project import REPO, harness_or_skip

sys.path.insert(0, str(REPO / "benchmarks"))

from oacbench import cassettes, targets  # noqa: E402
from oacbench.impls import find_ours  # noqa: E402
from oacbench.scenarios import Bench, Row  # noqa: E402


def rows(scripted: list[float], replayed: list[float], problems: list[str] = ()) -> list[Row]:
    return [Row(cassettes.SCRIPTED.format("claude"), "monitoring", 1, "none", "ours", walls=scripted),
            Row(cassettes.REPLAYED.format("claude"), "monitoring", 1, "none", "ours", walls=replayed,
                problems=list(problems))]


def test_the_verdict_asks_whether_the_replay_is_measurably_dearer() -> None:
    equal = [10.0, 10.4, 9.7, 10.1, 9.9, 10.2, 10.0, 9.8, 10.3, 10.0, 9.6, 10.1]
    noise = [1.02, 0.97, 1.01, 0.99, 1.03, 0.98, 1.0, 1.02, 0.96, 1.01, 0.99, 1.04]  # equal cost, ±4 %
    [same] = targets.cassette_targets(rows(equal, [a * r for a, r in zip(equal, noise)]))
    assert same.verdict == "PASS" and "not measurably dearer" in same.detail and "[claude, three turns]" in same.name
    assert "95 % interval 0.980–1.020" in same.detail and "median of 12 paired ratios 1.005" in same.detail
    [dearer] = targets.cassette_targets(rows(equal, [a * (r + 0.05) for a, r in zip(equal, noise)]))
    assert dearer.verdict == "MISS" and "the replay costs more" in dearer.detail  # 5 % dearer: every pair shows it
    wild = [0.8, 1.3, 0.9, 1.25, 1.0, 1.2, 0.85, 1.3, 0.95, 1.15, 0.9, 1.2]
    [noisy] = targets.cassette_targets(rows(equal, [a * r for a, r in zip(equal, wild)]))
    assert noisy.verdict == "MISS" and "undecided, too noisy" in noisy.detail  # a wide interval decides nothing
    # the machine slows down half way: each replay is 10 % faster than its pair's scripted run, but the later
    # (slower) pairs hold the replayed median up; the pairs decide
    slow = [1.0] * 4 + [3.0] * 4
    [drift] = targets.cassette_targets(rows(slow, [0.9] * 4 + [3.3] * 4))
    assert drift.verdict == "PASS" and "ratio of medians" in drift.detail and "= 1.050" in drift.detail
    [few] = targets.cassette_targets(rows([10.0, 11.0, 9.0], [8.0, 9.9, 12.0]))
    assert few.verdict == "NO DATA" and "too few pairs" in few.detail and "paired ratios 0.900" in few.detail
    [broken] = targets.cassette_targets(rows([10.0], [1.0], ["rep 0: exit 1"]))
    assert broken.verdict == "MISS" and "did not pass" in broken.detail  # a fast failure is no pass
    [unmeasured] = targets.cassette_targets(rows([10.0], []))
    assert unmeasured.verdict == "NO DATA"
    [unpaired] = targets.cassette_targets(rows([10.0, 10.0], [9.0]))
    assert unpaired.verdict == "NO DATA"
    assert [t.name for t in targets.evaluate(rows([1.0], [1.0]), {})] == [unmeasured.name]  # in every bench run


@given(st.integers(1, 60), st.lists(st.floats(0.5, 2.0), min_size=60, max_size=60))
def test_the_median_interval_is_the_narrowest_that_holds_the_median_95_percent_of_the_time(
        n: int, values: list[float]) -> None:
    """Oracle: the sign test. The interval from the k-th smallest to the k-th largest misses the median with
    probability 2·P(Binomial(n, ½) < k); the interval given has that at most 5 %, and the next narrower more."""
    def miss(k: int) -> float:
        return 2 * sum(math.comb(n, i) for i in range(k)) / 2 ** n

    ranks = targets.median_interval([float(i) for i in range(1, n + 1)])
    if ranks is None:
        assert n < 6 and miss(1) > 0.05  # no interval exists: even the widest misses too often
        return
    k = int(ranks[0])
    assert ranks == (k, n + 1 - k) and miss(k) <= 0.05 < miss(k + 1)
    assert targets.median_interval(values[:n]) == (sorted(values[:n])[k - 1], sorted(values[:n])[n - k])


@pytest.mark.harness
def test_the_scenario_measures_a_replay_through_the_real_harness(tmp_path: Path) -> None:
    harness_or_skip("claude")
    bench = Bench({"ours": find_ours(str(Path(sys.executable).with_name("oac")))}, timeout=600)
    cassettes.measure(bench, bench.impls["ours"], "claude", 1, tmp_path)
    scripted, replayed = bench.rows
    assert (scripted.scenario, replayed.scenario) == ("agent test via claude, scripted",
                                                      "agent test via claude, replayed from its cassette")
    assert not scripted.problems and not replayed.problems, scripted.problems + replayed.problems
    assert len(scripted.walls) == len(replayed.walls) == 1
    [target] = targets.cassette_targets(bench.rows)
    assert target.verdict == "NO DATA" and "too few pairs" in target.detail  # one pair: a ratio, no verdict
    assert "median of 1 paired ratios" in target.detail
    assert list(tmp_path.iterdir()) == []  # its copies (and what was put aside) are gone
