"""The history index (`history.index`): every view read through it is the view read from the whole log, for
any log appended in any pieces (torn lines included), and an index that no longer describes the log's bytes is
never used."""

import json
import os
import re
import shutil
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings, strategies as st

from history_data import failing_evidence, record, write
from open_agent_compiler.cli.results_cmd import text_lines
from open_agent_compiler.history import index as history_index
from open_agent_compiler.history.views import History, load_history, summary
from open_agent_compiler.history.index import IndexPlace, index_place, load_indexed
from open_agent_compiler.history.report_html import render

STATUSES = ("pass", "fail", "skipped", "not_runnable")


def views(history: History) -> str:
    """Everything `oac results` (text, json) and `oac report` show of a history, as one text."""
    page = re.sub(r'"generated":"[^"]*"', "", render(history))
    return "\n".join([*text_lines(history, 3), json.dumps(summary(history, 3), sort_keys=True), page])


def plain(path: Path) -> tuple[str, list[str]]:
    said: list[str] = []
    return views(load_history(path, warn=said.append)), said


def indexed(path: Path, place: IndexPlace) -> tuple[str, list[str]]:
    said: list[str] = []
    return views(load_indexed(path, place, warn=said.append)), said


def line(run: int, test: int, status: str, key: int, *, compact: bool = True, duration: float = 0.25) -> bytes:
    evidence = failing_evidence(f"run {run} </script><b>") if status == "fail" else []
    value = record(run, f"t:tool:n{test}", status, duration, key=f"k{key}", evidence=evidence, minutes=test)
    separators = (",", ":") if compact else (", ", ": ")
    return json.dumps(value, separators=separators).encode() + b"\n"


def log_of(tmp: Path, data: bytes = b"") -> tuple[Path, IndexPlace]:
    path = tmp / ".oac" / "test_results.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    place = index_place(path)
    assert place is not None and place.rel.startswith(".oac/results-index/")
    return path, place


def index_file(place: IndexPlace) -> Path:
    return place.root / place.rel


def assert_same(path: Path, place: IndexPlace) -> None:
    assert indexed(path, place) == plain(path)


# ----------------------------------------------------------------------------------------------------------------
# any log, appended in any pieces

pieces = st.one_of(
    st.builds(line, st.integers(0, 3), st.integers(0, 5), st.sampled_from(STATUSES), st.integers(0, 2),
              compact=st.booleans(), duration=st.sampled_from([0.1, 0.2, 0.3, 1e-7, 3.3])),
    st.sampled_from([b"{torn\n", b"[1, 2]\n", b"\n", b'{"not": "a record"}\n', b"\xff\xfe garbage\n"]),
)


@settings(max_examples=60, deadline=None)
@given(lines=st.lists(pieces, min_size=1, max_size=25), cuts=st.lists(st.integers(0, 10_000), max_size=8),
       torn=st.lists(st.integers(0, 24), max_size=3))
def test_views_through_the_index_equal_views_of_the_whole_log(lines: list[bytes], cuts: list[int],
                                                              torn: list[int]) -> None:
    """The log grows in random chunks (cut anywhere, mid-line too); after each, the view through the index (which
    it then updates) equals the view read from the whole log, warnings included. Some lines are torn for good (a
    crashed writer: the next record follows on the same line)."""
    for at in torn:
        if at < len(lines) and len(lines[at]) > 2:
            lines[at] = lines[at][: len(lines[at]) // 2]
    data = b"".join(lines)
    bounds = sorted({0, len(data), *(cut % (len(data) + 1) for cut in cuts)})
    with tempfile.TemporaryDirectory() as tmp:
        path, place = log_of(Path(tmp))
        for start, end in zip(bounds, bounds[1:]):
            with path.open("ab") as handle:
                handle.write(data[start:end])
            assert indexed(path, place) == plain(path)
        assert indexed(path, place) == plain(path)  # and once more with nothing new


def many(runs: int, tests: int = 6) -> bytes:
    return b"".join(line(run, test, ("pass", "fail", "pass")[(run + test) % 3], run if test % 2 else 0)
                    for run in range(runs) for test in range(tests) if (run + test) % 4)


def count_scans(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The byte length of every piece of log the index's scan reads from now on."""
    scanned: list[int] = []
    real_scan = history_index.scan

    def counting_scan(data: bytes, *args: Any, **kwargs: Any) -> Any:
        scanned.append(len(data))
        return real_scan(data, *args, **kwargs)

    monkeypatch.setattr(history_index, "scan", counting_scan)
    return scanned


def test_a_repeat_view_uses_the_index_and_reads_only_the_new_lines(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    path, place = log_of(tmp_path, many(5))
    assert_same(path, place)
    assert index_file(place).is_file()
    scanned = count_scans(monkeypatch)
    assert_same(path, place)
    assert scanned == []  # nothing new: nothing scanned
    with path.open("ab") as handle:
        handle.write(line(9, 1, "fail", 7))
    assert_same(path, place)
    assert scanned == [len(line(9, 1, "fail", 7))]  # only what was appended


# ----------------------------------------------------------------------------------------------------------------
# an index that does not describe the log is not used


def test_a_truncated_log_is_read_again(tmp_path: Path) -> None:
    path, place = log_of(tmp_path, many(6))
    assert_same(path, place)
    path.write_bytes(many(2))  # shorter than the offset
    assert_same(path, place)
    path.write_bytes(many(3) + b"".join(line(7, t, "fail", 1) for t in range(40)))  # longer again, other bytes
    assert_same(path, place)


def test_a_rewrite_in_place_with_the_same_size_is_seen(tmp_path: Path) -> None:
    """Same file, same size, one status changed in the middle: only the digest of the bytes can tell."""
    data = many(6)
    path, place = log_of(tmp_path, data)
    assert_same(path, place)
    where = data.index(b'"status":"pass"', len(data) // 2)
    inode = path.stat().st_ino
    with path.open("r+b") as handle:
        handle.seek(where)
        handle.write(b'"status":"fail"')
    assert path.stat().st_ino == inode and path.stat().st_size == len(data)
    assert_same(path, place)


def test_a_log_replaced_by_another_file_is_read_again(tmp_path: Path) -> None:
    data = many(6)
    path, place = log_of(tmp_path, data)
    assert_same(path, place)
    other = path.with_name("rotated.jsonl")
    other.write_bytes(data.replace(b'"status":"fail"', b'"status":"pass"'))
    os.replace(other, path)
    assert_same(path, place)


def trusted(place: IndexPlace, results: Path | str, log: Path) -> bool:
    """Whether the index at `place` is taken for the log open from `log`, under the name `results`."""
    fd = os.open(log, os.O_RDONLY)
    try:
        return history_index._read(place, os.path.abspath(results), fd, os.fstat(fd)) is not None
    finally:
        os.close(fd)


def test_an_index_is_trusted_only_for_its_own_path_and_file(tmp_path: Path) -> None:
    """Identical bytes are not enough: another path (an index copied over), or the same path now another file."""
    data = many(3)
    path, place = log_of(tmp_path, data)
    load_indexed(path, place)
    assert trusted(place, path, path)
    assert not trusted(place, str(path) + "x", path)
    copy = path.with_name("copy.jsonl")
    copy.write_bytes(data)
    assert copy.stat().st_ino != path.stat().st_ino
    assert not trusted(place, path, copy)  # same name and bytes, another file
    # an index of another log put where this one's belongs
    shutil.copyfile(index_file(place), index_file(index_place(copy)))
    assert not trusted(index_place(copy), copy, copy)
    assert indexed(copy, index_place(copy)) == plain(copy)


def test_a_torn_last_line_is_not_indexed_until_it_ends(tmp_path: Path) -> None:
    whole = line(8, 2, "fail", 5)
    path, place = log_of(tmp_path, many(4) + whole[:40])
    assert_same(path, place)  # the torn line: a warning, every time
    with path.open("ab") as handle:
        handle.write(whole[40:] + line(8, 3, "pass", 5))
    view, said = indexed(path, place)
    assert (view, said) == plain(path) and said == []


@pytest.mark.parametrize("damage", ["garbage", "empty", "truncated", "bad digest", "not marshal", "other python"])
def test_a_damaged_index_is_rebuilt_without_a_traceback(tmp_path: Path, damage: str) -> None:
    path, place = log_of(tmp_path, many(5) + b"{torn\n" + many(2))
    assert_same(path, place)
    target = index_file(place)
    good = target.read_bytes()
    magic = history_index._MAGIC
    body = b"\x00not marshal\x01" * 3
    if damage == "garbage":
        target.write_bytes(os.urandom(300))
    elif damage == "empty":
        target.write_bytes(b"")
    elif damage == "truncated":
        target.write_bytes(good[: len(good) // 2])
    elif damage == "bad digest":
        target.write_bytes(good[:-1] + bytes([good[-1] ^ 1]))
    elif damage == "not marshal":  # a valid digest over bytes marshal cannot read
        target.write_bytes(magic + history_index.xxhash.xxh3_128_digest(body) + body)
    else:  # well formed, from another interpreter
        import marshal

        fields = list(marshal.loads(good[len(magic) + 16:]))
        fields[0] = "cpython-299 marshal 9"
        other = marshal.dumps(tuple(fields))
        target.write_bytes(magic + history_index.xxhash.xxh3_128_digest(other) + other)
    assert_same(path, place)
    assert target.read_bytes() == good  # rebuilt as it was


def test_warnings_about_lines_before_the_offset_are_repeated(tmp_path: Path) -> None:
    path, place = log_of(tmp_path, many(2) + b"{torn\n[1]\n" + many(3))
    first = indexed(path, place)
    again = indexed(path, place)
    assert first == again == plain(path)
    assert [w.rsplit(": ", 1)[1] for w in again[1]] == ["skipping a corrupt line",
                                                       "skipping a line that is not a JSON object"]
    torn_at = many(2).count(b"\n") + 1
    assert f"{path}:{torn_at}:" in again[1][0]


# ----------------------------------------------------------------------------------------------------------------
# where it is written, and when it cannot be


def test_a_log_outside_any_oac_directory_gets_no_index_there(tmp_path: Path) -> None:
    path = write(tmp_path / "shared" / "results.jsonl", [record(0, "t:tool:a", "pass", 1.0)])
    assert index_place(path) is None
    project_state = tmp_path / "project" / ".oac"
    place = index_place(path, project_state)
    assert place is not None and (place.root / place.rel).parent == project_state / "results-index"
    assert indexed(path, place) == plain(path)
    assert sorted(p.name for p in path.parent.iterdir()) == ["results.jsonl"]  # nothing next to a file not ours


def test_where_the_index_cannot_be_written_the_view_still_works(tmp_path: Path) -> None:
    path, place = log_of(tmp_path, many(3))
    (path.parent / "results-index").write_text("a file where the index folder would be")
    assert indexed(path, place) == plain(path)
    assert (path.parent / "results-index").read_text().startswith("a file")


def test_the_index_is_never_written_through_a_symlink(tmp_path: Path) -> None:
    path, place = log_of(tmp_path, many(3))
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (path.parent / "results-index").symlink_to(elsewhere)
    assert indexed(path, place) == plain(path)
    assert list(elsewhere.iterdir()) == []


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into a read-only directory")
def test_a_read_only_state_directory(tmp_path: Path) -> None:
    path, place = log_of(tmp_path, many(3))
    path.parent.chmod(0o555)
    try:
        assert indexed(path, place) == plain(path)
        assert not (path.parent / "results-index").exists()
    finally:
        path.parent.chmod(0o755)


def test_a_hostile_test_name_is_still_escaped_in_the_report_read_through_the_index(tmp_path: Path) -> None:
    hostile = 'x:tool:</script><script>alert("pwned")</script>'
    records = [record(0, hostile, "fail", 0.5, name=hostile, evidence=failing_evidence("<img src=x onerror=alert(1)>"))]
    path, place = log_of(tmp_path, b"".join(json.dumps(r, separators=(",", ":")).encode() + b"\n" for r in records))
    load_indexed(path, place)
    page = render(load_indexed(path, place))  # the second read comes from the index
    assert "<script>alert" not in page and "<img src=x" not in page
    assert indexed(path, place) == plain(path)


# ----------------------------------------------------------------------------------------------------------------
# the commands


def test_every_command_shows_the_same_with_and_without_the_index(tmp_path: Path) -> None:
    """`oac results` (text, json, --since) and `oac report`: first run (index built), repeat (index used), after an
    append (index extended), and with the index removed: the same bytes (the report's generation time aside)."""
    import subprocess
    import sys

    oac = str(Path(sys.executable).with_name("oac"))
    path, place = log_of(tmp_path, many(4) + b"{torn\n" + many(2))

    def run_all() -> list[str]:
        out = []
        for args in (["results"], ["results", "--format", "json"], ["results", "--results", str(path), "--top", "2"],
                     ["results", "--since", "2026-11-03"], ["report", "-o", "r.html"]):
            done = subprocess.run([oac, *args], cwd=tmp_path, capture_output=True, text=True, timeout=60)
            assert done.returncode == 0, done.stderr
            out.append(done.stdout + done.stderr)
            if args[0] == "report":
                out.append(re.sub(r'"generated":"[^"]*"', "", (tmp_path / "r.html").read_text()))
        return out

    first = run_all()
    assert index_file(place).is_file()
    assert run_all() == first
    shutil.rmtree(path.parent / "results-index")
    assert run_all() == first
    with path.open("ab") as handle:
        handle.write(line(9, 1, "fail", 3) + line(9, 2, "pass", 3)[:30])
    extended = run_all()
    shutil.rmtree(path.parent / "results-index")
    assert run_all() == extended != first


def test_a_log_cut_short_while_it_is_read_through_the_index_is_read_again(tmp_path: Path,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """A writer truncates the log right after the index was checked (a rotation by copy and truncate): the lines
    the index points at are gone, so the log is read again from the start, each warning said once."""
    path, place = log_of(tmp_path, many(4) + b"{torn\n" + many(3))
    assert_same(path, place)
    real_read = history_index._read

    def read_then_truncate(*args: Any) -> Any:
        found = real_read(*args)
        with path.open("r+b") as handle:
            handle.truncate(len(many(2)) + 3)
        return found

    monkeypatch.setattr(history_index, "_read", read_then_truncate)
    view, said = indexed(path, place)
    monkeypatch.setattr(history_index, "_read", real_read)
    assert (view, said) == plain(path)


# ----------------------------------------------------------------------------------------------------------------
# --since through the index: it skips the older part of the log, and shows what the whole log shows

STAMPS = ["2026-11-01T09:00:00.000+00:00", "2026-11-02T09:00:00.000+00:00", "2026-11-02T11:30:00+02:00",
          "2026-11-03T09:00:00.000+00:00", "2026-11-03T09:00:00.000001+00:00", "2026-11-04T00:00:00Z", "not a time",
          "2026-11-05T09:00:00.000+00:00"]
SINCE = [datetime(2026, 11, day, hour, tzinfo=timezone.utc) for day in (1, 2, 3, 4, 6) for hour in (0, 9)]


def stamped(run: int, test: int, status: str, stamp: str, compact: bool) -> bytes:
    value = record(run, f"t:tool:n{test}", status, 0.5, key=f"k{run % 2}")
    value["timestamp"] = stamp
    return json.dumps(value, separators=(",", ":") if compact else (", ", ": ")).encode() + b"\n"


def since_views(path: Path, place: IndexPlace | None, since: datetime) -> tuple[str, list[str]]:
    said: list[str] = []
    history = load_history(path, since, warn=said.append) if place is None else load_indexed(
        path, place, warn=said.append, since=since)
    return views(history), said


since_lines = st.one_of(
    st.builds(stamped, st.integers(0, 3), st.integers(0, 4), st.sampled_from(STATUSES), st.sampled_from(STAMPS),
              st.booleans()),
    st.sampled_from([b"{torn\n", b"[1]\n"]),
)


@settings(max_examples=60, deadline=None)
@given(first=st.lists(since_lines, max_size=20), then=st.lists(since_lines, max_size=12),
       later=st.lists(since_lines, max_size=4), naive=st.booleans(), since=st.sampled_from(SINCE))
def test_since_through_the_index_equals_since_over_the_whole_log(first: list[bytes], then: list[bytes],
                                                                 later: list[bytes], naive: bool,
                                                                 since: datetime) -> None:
    """Timestamps out of order, in other offsets, unparseable, or (`naive`, first) without an offset, read in a
    time zone ten hours behind UTC; marks every two records; lines appended after the index was written."""
    extra = [stamped(9, 1, "pass", "2026-11-03T10:00:00", True)] if naive else []
    with tempfile.TemporaryDirectory() as tmp, pytest.MonkeyPatch.context() as patch:
        patch.setattr(history_index, "MARK_EVERY", 2)
        patch.setenv("TZ", "HST+10")
        time.tzset()
        try:
            path, place = log_of(Path(tmp), b"".join(extra + first))
            load_indexed(path, place)
            with path.open("ab") as handle:
                handle.write(b"".join(then))
            load_indexed(path, place)  # extends the index (and its marks) by `then`
            with path.open("ab") as handle:
                handle.write(b"".join(later))
            assert since_views(path, place, since) == since_views(path, None, since)
        finally:
            patch.undo()
            time.tzset()


def test_since_reads_only_the_part_of_the_log_from_then_on(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(history_index, "MARK_EVERY", 3)
    stamps = [f"2026-11-{day:02d}T09:00:00.000+00:00" for day in range(1, 21)]
    data = b"".join(stamped(day, test, "pass", stamp, True) for day, stamp in enumerate(stamps) for test in range(3))
    path, place = log_of(tmp_path, data[:100] + b"\n{torn\n" + data[100:])
    load_indexed(path, place)
    scanned = count_scans(monkeypatch)
    since = datetime(2026, 11, 18, tzinfo=timezone.utc)
    assert since_views(path, place, since) == since_views(path, None, since)
    assert 0 < scanned[0] < len(data) / 4  # the last three days and a bit
    for exact in (datetime(2026, 11, day, 9, tzinfo=timezone.utc) for day in (5, 6, 7, 18)):  # == a record's time
        assert since_views(path, place, exact) == since_views(path, None, exact)
    assert len(since_views(path, place, since)[1]) == 3  # the lines before, skipped, still warned about


def test_the_index_ends_before_a_torn_last_line_so_the_next_view_reads_only_from_there(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 33 (a mutation survivor): an index that covered the half-written line would be refused on the next
    view (its offset is not at a line end) and the whole log scanned again."""
    whole = line(8, 2, "fail", 5)
    path, place = log_of(tmp_path, many(4) + whole[:40])
    assert_same(path, place)
    scanned = count_scans(monkeypatch)
    with path.open("ab") as handle:
        handle.write(whole[40:])
    assert_same(path, place)
    assert scanned == [len(whole)]  # from the torn line's start, not the whole log
