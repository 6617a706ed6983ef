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


def test_the_state_keeps_a_small_page_cache_and_reads_back_many_rows(tmp_path: Path) -> None:
    """sqlite's page cache is 256 KiB (its default, 2 MiB, was ~1.8 MB of a cold run's peak RSS); rows written
    in batches that outgrow it are all read back, by key and by the next run's scan."""
    path = str(tmp_path / "state.sqlite3")
    db = OacStateDB(path)
    try:
        assert db._conn.execute("pragma cache_size").fetchone()[0] == -256
        for index in range(3000):
            db.set(f"test:{index}", VALUES, {"key": f"k{index}", "status": "pass", "at": "t", "parts": {"p": "x" * 200}})
        db.flush()
        assert db.green("test:1234") == ("k1234", "t") and db.parts("test:2999") == {"p": "x" * 200}
    finally:
        db.dump()
    again = OacStateDB(path)
    try:
        assert all(again.green(f"test:{index}") == (f"k{index}", "t") for index in range(3000))
    finally:
        again.dump()
