"""The backend lets go of a task's row once it is committed (cold peak RSS, issue 18): asked again, the row is
read back from the file, the same; and while it is open in this process, records may wait in a batch."""

from pathlib import Path

from open_agent_compiler.tasks import backend
from open_agent_compiler.tasks.backend import VALUES, OacStateDB


def test_a_committed_row_is_released_and_read_back_the_same(tmp_path: Path) -> None:
    db = OacStateDB(str(tmp_path / "state.sqlite3"))
    try:
        assert backend.batches_records()
        values = {"key": "k1", "status": "pass", "at": "2026-12-01T00:00:00", "parts": {"target": "abc"}}
        db.set("test:x", VALUES, values)
        db.set("test:x", "checker:", "MD5Checker")
        db.set("test:y", VALUES, {"status": "fail"})
        db.mark_failed("test:y")
        db.flush()
        assert "test:x" not in db._cache and "test:y" not in db._cache
        assert db.get("test:x", VALUES) == {"key": "k1", "status": "pass", "at": "2026-12-01T00:00:00"}
        assert db.get("test:x", "checker:") == "MD5Checker"
        assert db.parts("test:x") == {"target": "abc"}
        assert db.green("test:x") == ("k1", "2026-12-01T00:00:00")
        assert db.in_("test:x") and db.failed_last("test:y") and not db.in_("test:y")
        db.set("test:x", "deps:", ("a",))  # a later write adds to the row read back, and is committed too
        db.flush()
        assert db.get("test:x", "deps:") == ["a"] and db.get("test:x", "checker:") == "MD5Checker"
    finally:
        db.dump()
    assert not backend.batches_records()  # closed: a record is written at once again
