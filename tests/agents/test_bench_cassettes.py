"""The `doit bench` cassette scenario (issue 35): a replayed agent test through a real harness against the scripted
one, measured interleaved in one run (the two copies swapping roles), with a verdict on the paired ratios."""

import sys
from pathlib import Path

import pytest

from agent_project import REPO, harness_or_skip

sys.path.insert(0, str(REPO / "benchmarks"))

from oacbench import cassettes, targets  # noqa: E402
from oacbench.impls import find_ours  # noqa: E402
from oacbench.scenarios import Bench, Row  # noqa: E402


def rows(scripted: list[float], replayed: list[float], problems: list[str] = ()) -> list[Row]:
    return [Row(cassettes.SCRIPTED.format("claude"), "monitoring", 1, "none", "ours", walls=scripted),
            Row(cassettes.REPLAYED.format("claude"), "monitoring", 1, "none", "ours", walls=replayed,
                problems=list(problems))]


def test_the_verdict_is_the_median_of_the_paired_ratios() -> None:
    [cheaper] = targets.cassette_targets(rows([10.0, 11.0, 9.0], [8.0, 9.9, 12.0]))
    assert cheaper.verdict == "PASS" and "paired ratios 0.900" in cheaper.detail
    assert "[claude, three turns]" in cheaper.name
    assert "ratio of medians 9.900s / 10.000s = 0.990" in cheaper.detail and "pairs under 1: 2 of 3" in cheaper.detail
    [dearer] = targets.cassette_targets(rows([10.0, 10.0, 10.0], [10.5, 10.2, 10.1]))
    assert dearer.verdict == "MISS" and "paired ratios 1.020" in dearer.detail and "(limit 1.00;" in dearer.detail
    # the machine slows down half way: each replay is 10 % faster than its pair's scripted run, but the later
    # (slower) pairs hold the replayed median up; the pairs decide
    [drift] = targets.cassette_targets(rows([1.0, 1.0, 3.0, 3.0], [0.9, 0.9, 3.3, 3.3]))
    assert drift.verdict == "PASS" and "paired ratios 1.000" in drift.detail and "= 1.050" in drift.detail
    [broken] = targets.cassette_targets(rows([10.0], [1.0], ["rep 0: exit 1"]))
    assert broken.verdict == "MISS" and "did not pass" in broken.detail  # a fast failure is no pass
    [unmeasured] = targets.cassette_targets(rows([10.0], []))
    assert unmeasured.verdict == "NO DATA"
    [unpaired] = targets.cassette_targets(rows([10.0, 10.0], [9.0]))
    assert unpaired.verdict == "NO DATA"
    assert [t.name for t in targets.evaluate(rows([1.0], [1.0]), {})] == [unmeasured.name]  # in every bench run


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
    assert target.verdict in ("PASS", "MISS") and "median of 1 paired ratios" in target.detail
    assert list(tmp_path.iterdir()) == []  # its copies (and what was put aside) are gone
