"""-k / -m expressions (pytest's grammar, our parser), shards, --last-failed history."""

import pytest

from open_agent_compiler.errors import NothingSelected, OacError
from open_agent_compiler.testing.selection import (
    ExpressionError, hash_shard, keyword_matcher, last_failed, marker_matcher, parse_shard, recorded_durations,
    shard_of,
)

IDS = ["tool:echo-tool::echo-default-mock", "tool:echo-tool::echo-via-profile", "capability:primary::echo-bash",
       "agent:primary::echo-conversation", "capability:primary::write-off"]


def keep(expr: str) -> list[str]:
    match = keyword_matcher(expr)
    return [i for i in IDS if match(i.lower(), frozenset())]


@pytest.mark.parametrize(("expr", "expected"), [
    ("echo", IDS[:4]),
    ("ECHO and not profile", [IDS[0], IDS[2], IDS[3]]),
    ("write or conversation", [IDS[3], IDS[4]]),
    ("not (tool or agent)", [IDS[2], IDS[4]]),
    ("tool: and (mock or profile)", IDS[:2]),
    ("not not write", [IDS[4]]),
    ("", IDS),
    ("a or b and c", [i for i in IDS if "a" in i]),  # and binds tighter: a or (b and c)
    ("(a or b) and nothing-here", []),
])
def test_keyword_expressions(expr: str, expected: list[str]) -> None:
    assert keep(expr) == expected


def test_precedence_is_not_then_and_then_or() -> None:
    match = marker_matcher("x or y and not z")
    assert match("", frozenset({"x", "z"}))  # x or (y and (not z))
    assert not match("", frozenset({"y", "z"}))
    assert match("", frozenset({"y"}))


def test_markers_are_exact_tags_not_substrings() -> None:
    match = marker_matcher("slow")
    assert match("", frozenset({"slow"})) and not match("", frozenset({"slower"}))
    assert marker_matcher("slow and not harness")("", frozenset({"slow"}))
    assert not marker_matcher("slow and not harness")("", frozenset({"slow", "harness"}))


@pytest.mark.parametrize(("expr", "needle"), [
    ("a and", "ends where a name"),
    ("(a or b", "'(' is not closed"),
    ("a b", "unexpected 'b'"),
    ("a or or b", "unexpected 'or'"),
    (") a", "unexpected ')'"),
    ("a; import os", "unexpected character ';'"),
    ("__import__('os')", "unexpected character \"'\""),
])
def test_bad_expressions_are_one_clear_error(expr: str, needle: str) -> None:
    with pytest.raises(ExpressionError, match="-k") as caught:
        keyword_matcher(expr)
    assert needle in str(caught.value) and isinstance(caught.value, OacError)


def test_shard_spec() -> None:
    assert parse_shard("2/3") == (2, 3) and parse_shard(" 1 / 1 ") == (1, 1)
    for bad in ("0/3", "4/3", "x/3", "1", "1/0"):
        with pytest.raises(OacError, match="--shard"):
            parse_shard(bad)


def test_hash_shards_partition_and_adding_tests_moves_none() -> None:
    ids = [f"tool:t{i}::case-{i}" for i in range(3000)]
    placed = shard_of(ids, 3)
    assert set(placed.values()) == {1, 2, 3}
    sizes = [list(placed.values()).count(k) for k in (1, 2, 3)]
    assert all(900 < size < 1100 for size in sizes), sizes
    more = shard_of(ids + [f"agent:new{i}::x" for i in range(100)], 3)
    assert all(more[i] == placed[i] for i in ids)
    assert all(hash_shard(i, 3) == placed[i] for i in ids)


def test_duration_shards_balance_timed_tests_and_are_deterministic() -> None:
    ids = [f"agent:a{i}::t" for i in range(6)] + [f"tool:x{i}::t" for i in range(50)]
    durations = {"agent:a0::t": 50.0, "agent:a1::t": 40.0, "agent:a2::t": 30.0, "agent:a3::t": 20.0,
                 "agent:a4::t": 10.0, "agent:a5::t": 10.0}
    placed = shard_of(ids, 2, durations)
    load = {k: sum(d for t, d in durations.items() if placed[t] == k) for k in (1, 2)}
    assert load == {1: 80.0, 2: 80.0}  # 50+20+10 | 40+30+10
    assert shard_of(list(reversed(ids)), 2, durations) == placed
    assert all(placed[i] == hash_shard(i, 2) for i in ids if i not in durations)  # untimed tests keep their hash


def test_last_failed_takes_each_tests_latest_record_of_the_config() -> None:
    history = [
        {"test_id": "a", "status": "fail", "config": "prod"},
        {"test_id": "b", "status": "fail", "config": "prod"},
        {"test_id": "a", "status": "pass", "config": "prod"},
        {"test_id": "c", "status": "fail", "config": "dev"},
        {"test_id": "d", "status": "pass", "config": "prod"},
        {"test_id": "d", "status": "fail", "config": "prod", "repeat": 2},  # a single repeat is not the verdict
    ]
    assert last_failed(history, "prod") == {"b"}
    assert recorded_durations([{"test_id": "agent:x::y", "test_kind": "agent", "status": "pass", "duration_s": 3,
                                "config": "prod"}], "prod") == {"agent:x::y": 3.0}


def test_narrow_refuses_an_expression_that_selects_nothing() -> None:
    from open_agent_compiler.testing.selection import narrow

    class Case:
        def __init__(self, test_id: str, tags: tuple[str, ...] = ()) -> None:
            self.test_id = test_id
            self.test = type("T", (), {"tags": tags})()

    cases = [Case("tool:a::b", ("slow",)), Case("tool:c::d")]
    assert [c.test_id for c in narrow(cases, markers="slow")[0]] == ["tool:a::b"]
    with pytest.raises(NothingSelected, match="-k 'zzz' matched none of the 2 tests"):
        narrow(cases, keyword="zzz")
    kept, notes = narrow(cases, failed=set())
    assert kept == cases and "no recorded failure" in notes[0]
    assert narrow([], keyword="zzz") == ([], [])  # an empty config is not the expression's fault
    shards = [narrow(cases, shard=(k, 5))[0] for k in range(1, 6)]
    assert sorted(c.test_id for shard in shards for c in shard) == ["tool:a::b", "tool:c::d"]
