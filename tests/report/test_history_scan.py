"""The history reader's fast path (`scan_records`) reads exactly what json reads, for any record text."""

import json
from pathlib import Path

from hypothesis import HealthCheck, given, settings, strategies as st

from open_agent_compiler.history.log import TestRecord, scan_records

texts = st.text(st.characters(blacklist_categories=("Cs",)), max_size=12)


def _record(test_id: str, run_id: str, status: str, duration: float, key: str, evidence: str) -> TestRecord:
    return TestRecord(timestamp="2026-11-01T09:00:00.000+00:00", run_id=run_id, test_id=test_id, test_kind="tool",
                      test_name=test_id, target_name="t", status=status, passed=status == "pass", score=1.0,
                      duration_s=duration, variant=None, access_profile=None, mock_profile=None, model=None,
                      dialect=None, agent_state_hash="a", mock_set_hash=None, composite_hash=key,
                      evidence=[{"name": ',"status":"fail","duration_s":9,', "evidence": evidence}])


@settings(max_examples=150, suppress_health_check=[HealthCheck.function_scoped_fixture], deadline=None)
@given(test_id=texts, run_id=texts, status=st.sampled_from(["pass", "fail", "skipped", "not_runnable"]),
       duration=st.floats(min_value=0, max_value=1e6, allow_nan=False), key=texts, evidence=texts,
       compact=st.booleans())
def test_fast_path_equals_json(tmp_path: Path, test_id: str, run_id: str, status: str, duration: float, key: str,
                               evidence: str, compact: bool) -> None:
    record = _record(test_id, run_id, status, duration, key, evidence)
    line = record.model_dump_json() if compact else json.dumps(record.model_dump())  # ours, and another writer's
    path = tmp_path / "h.jsonl"
    path.write_text(line + "\n")
    [(stamp, run, test, got_status, got_duration, got_key, raw)] = list(scan_records(path, warn=print))
    assert test.decode("utf-8", "surrogatepass") == test_id and run.decode() == run_id
    assert (got_status, got_duration, got_key.decode()) == (status, duration, key)
    assert json.loads(raw)["evidence"][0]["evidence"] == evidence


def test_corrupt_and_foreign_lines_warn_with_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "h.jsonl"
    good = _record("x", "r", "pass", 1.0, "k", "").model_dump_json()
    path.write_text(f"{good}\n{{torn\n[1, 2]\n\n{good}\n")
    warnings: list[str] = []
    assert len(list(scan_records(path, warn=warnings.append))) == 2
    assert warnings == [f"oac: warning: {path}:2: skipping a corrupt line",
                        f"oac: warning: {path}:3: skipping a line that is not a JSON object"]


def test_our_writers_records_take_the_fast_path() -> None:
    """A field added to TestRecord before `evidence` must be added to `_SLIM` too, or every line goes through
    json (several times slower on a long history)."""
    from open_agent_compiler.history.log import _SLIM

    for status in ("pass", "fail", "skipped", "not_runnable"):
        record = _record("agent:tool:x", "0123abcd", status, 0.25, "f" * 32, "ok")
        assert _SLIM.match(record.model_dump_json().encode()), status
