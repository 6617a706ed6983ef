"""A record's timestamp: local time with the UTC offset of that very instant, exactly as
`datetime.fromtimestamp(t).astimezone().isoformat(timespec="milliseconds")` writes it (DST changes included)."""

import time
from datetime import datetime

import pytest

from open_agent_compiler.testing import results


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
