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
        assert db._summaries["test:x"] is db._summaries["test:y"] is backend._ON_DISK  # its columns: in the file
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


def test_a_committed_summary_is_read_back_and_an_adopted_pass_keeps_its_own(tmp_path: Path) -> None:
    """A row this run committed keeps no summary in memory (5,000 were ~0.9 MB of a cold run's peak RSS): the
    green key and time, checker, deps and imports are read back from the file, the same; a pass adopted from the
    shared state keeps its summary (doit checks those tasks after the flush that commits them)."""
    path = str(tmp_path / "state.sqlite3")
    db = OacStateDB(path)
    try:
        db.set("test:x", VALUES, {"key": "k1", "status": "pass", "at": "t1", "imports": ["m.py"]})
        db.set("test:x", "checker:", "OacFileChecker")
        db.set("test:x", "deps:", ["a.py"])
        db.set("test:z", VALUES, {"key": "k3", "status": "pass", "at": "t3", "shared": True})
        db.set("test:z", "checker:", "OacFileChecker")
        db.flush()
        assert db._summaries["test:x"] is backend._ON_DISK
        assert db._summaries["test:z"] is not backend._ON_DISK and db._summaries["test:z"].green_key == "k3"
        assert db.green("test:x") == ("k1", "t1") and db.green("test:z") == ("k3", "t3")
        assert db.get("test:x", VALUES) == {"key": "k1", "status": "pass", "at": "t1", "imports": ["m.py"]}
        assert db.get("test:x", "checker:") == "OacFileChecker" and db.get("test:x", "deps:") == ["a.py"]
        assert db.green("test:none") == (None, None) and db.get("test:none", VALUES) is None
    finally:
        db.dump()
    again = OacStateDB(path)
    try:
        assert again.green("test:x") == ("k1", "t1") and again._summaries["test:x"].imports == '["m.py"]'
    finally:
        again.dump()
