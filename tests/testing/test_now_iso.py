"""A record's timestamp: local time with the UTC offset of that very instant, exactly as
`datetime.fromtimestamp(t).astimezone().isoformat(timespec="milliseconds")` writes it (DST changes included)."""

import time
from datetime import datetime

import pytest

from open_agent_compiler.history import log as results


@pytest.mark.parametrize("zone", ["UTC", "Europe/Warsaw", "America/St_Johns", "Asia/Kolkata", "Australia/Lord_Howe"])
def test_now_iso_is_the_local_time_of_the_instant(zone: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TZ", zone)
    time.tzset()
    try:
        # around the 2026 DST changes (Europe: 29 March, 25 October) and an ordinary instant; fractions that
        # round up and down at the millisecond
        for instant in (1774745999.9994, 1774746000.0006, 1792889999.25, 1792890000.5, 1764612345.0, 1764612345.9999):
            monkeypatch.setattr(results.time, "time", lambda instant=instant: instant)
            expected = datetime.fromtimestamp(instant).astimezone().isoformat(timespec="milliseconds")
            assert results.now_iso() == expected, (zone, instant)
    finally:
        monkeypatch.delenv("TZ")
        time.tzset()


@pytest.mark.parametrize("zone", ["UTC", "Europe/Warsaw", "Asia/Kolkata"])
def test_now_iso_rounds_and_carries_as_datetime_does(zone: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The milliseconds are added to the text of the whole second, which is kept per second: the microseconds
    are rounded half to even as `datetime.fromtimestamp` rounds them, and a fraction that rounds up to a whole
    second is the next second's text (found by trying fractions next to every rounding edge)."""
    from hypothesis import given, settings
    from hypothesis import strategies as st

    monkeypatch.setenv("TZ", zone)
    time.tzset()
    edges = st.builds(lambda second, tail: second + tail, st.integers(1_700_000_000, 1_800_000_000),
                      st.sampled_from([0.0, 0.0005, 0.0004999, 0.9994999, 0.9995, 0.9999995, 0.99999949, 0.9999999,
                                       0.5, 0.25, 0.1234565]))
    instants = st.one_of(edges, st.floats(1_600_000_000, 1_900_000_000))

    @settings(max_examples=400, deadline=None)
    @given(instants)
    def same(instant: float) -> None:
        monkeypatch.setattr(results.time, "time", lambda: instant)
        expected = datetime.fromtimestamp(instant).astimezone().isoformat(timespec="milliseconds")
        assert results.now_iso() == expected, (zone, instant)

    try:
        monkeypatch.setattr(results, "_SECOND", [(-1, "", "")])  # a new zone: nothing kept from another one
        same()
    finally:
        monkeypatch.delenv("TZ")
        time.tzset()
