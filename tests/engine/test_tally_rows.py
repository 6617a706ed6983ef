"""The tally's rows held compactly (`tasks.tally_rows`) read back as the same tuples, in order, as a list would."""

from hypothesis import given
from hypothesis import strategies as st

from open_agent_compiler.tasks.reporter import RunTally
from open_agent_compiler.tasks.tally_rows import TallyRows

_ROWS = st.lists(st.tuples(st.text(max_size=8), st.text(max_size=8),
                           st.sampled_from(["pass", "fail", "skipped", "not_runnable", "flaky"]),
                           st.floats(allow_nan=False), st.text(max_size=8)), max_size=30)


@given(_ROWS)
def test_rows_read_back_as_appended(rows: list[tuple[str, str, str, float, str]]) -> None:
    held = TallyRows()
    for row in rows:
        held.append(row)
    assert len(held) == len(rows)
    assert list(held) == rows
    assert [held[i] for i in range(len(rows))] == rows
    assert [held[-i] for i in range(1, len(rows) + 1)] == [rows[-i] for i in range(1, len(rows) + 1)]
    assert held[1:] == rows[1:]


def test_a_run_tally_holds_its_rows_compactly_and_durations_read_them() -> None:
    tally = RunTally()
    assert isinstance(tally.rows, TallyRows)
    tally.rows.append(("tool:a::slow", "slow", "pass", 0.5, ""))
    tally.rows.append(("tool:a::fast", "fast", "fail", 0.25, "expected 1"))
    tally.rows.append(("tool:a::green", "green", "skipped", 0.0, "matches green run from t"))
    tally.kinds.update({"tool:a::slow": "tool", "tool:a::fast": "tool"})
    assert tally.slowest(0) == [("tool:a::slow", "tool", "pass", 0.5), ("tool:a::fast", "tool", "fail", 0.25)]
    assert tally.rows[1] == ("tool:a::fast", "fast", "fail", 0.25, "expected 1")
