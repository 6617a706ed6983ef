"""fsio, the one way oac writes a file: regular files only, atomically (temp + fsync + rename), never through a
symlink, with the umask's mode. Every writer of oac goes through it; these tests pin its behaviour."""

import errno
import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from open_agent_compiler import fsio
from open_agent_compiler.errors import OacError
from open_agent_compiler.tasks.junit import write_junit
from open_agent_compiler.tasks.memo_store import (load_key_cache, load_memo, memo_entries, memo_payload,
                                                  save_key_cache, save_memo)
from open_agent_compiler.compiler.render_memo import RenderMemo
from open_agent_compiler.keys.cache import KeyCache
from open_agent_compiler.history.log import ResultsLog, TestRecord


@pytest.fixture
def umask() -> Iterator[object]:
    """Set the process umask for one test (and restore it)."""
    old = os.umask(0o022)
    os.umask(old)

    def set_to(value: int) -> None:
        os.umask(value)

    yield set_to
    os.umask(old)


def leftovers(root: Path) -> list[str]:
    return sorted(p.name for p in root.rglob("*") if p.name.endswith(fsio.TEMP_SUFFIX))


class Tally:
    rows = [("a.py::t", "t", "pass", 0.1, ""), ("a.py::u", "u", "fail", 0.2, "boom")]
    failed, skipped, not_runnable, errors = 1, 0, 0, []


def record() -> TestRecord:
    return TestRecord(timestamp="t", run_id="r", test_id="x", test_kind="tool", test_name="x", target_name="x",
                      status="pass", passed=True, score=1.0, duration_s=0.0, variant=None, access_profile=None,
                      mock_profile=None, model=None, dialect=None, agent_state_hash="a", mock_set_hash=None,
                      composite_hash="c", evidence=[])


# temp + rename, never in place ---------------------------------------------------------------------------------------
WRITERS = {
    "fsio": lambda path, text: fsio.write_file(path.parent, path.name, text.encode()),
    "junit": lambda path, text: write_junit(path, type("T", (Tally,), {"rows": [("m::t", text, "pass", 0.0, "")]})),
    "memo": lambda path, text: save_memo(path, _memo(text)),
}


def _memo(text: str) -> RenderMemo:
    memo = RenderMemo()
    memo.render("opencode", text, lambda: text.encode())
    return memo


@pytest.mark.parametrize("writer", sorted(WRITERS))
def test_a_rewrite_replaces_the_inode_and_a_reader_keeps_the_old_bytes(writer: str, tmp_path: Path) -> None:
    path = tmp_path / ".oac" / "out.file"
    path.parent.mkdir()
    WRITERS[writer](path, "first version")
    before = path.read_bytes()
    with open(path, "rb") as reader:  # holds the old inode, as a harness reading its config would
        inode = os.fstat(reader.fileno()).st_ino
        WRITERS[writer](path, "second version, longer than the first")
        assert reader.read() == before  # an in-place write would show the new bytes (or a torn mix) here
    assert os.stat(path).st_ino != inode and path.read_bytes() != before
    assert leftovers(tmp_path) == []


def test_the_data_is_fsynced_before_the_rename(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    events: list[str] = []
    real_fsync, real_rename = os.fsync, os.rename
    monkeypatch.setattr(os, "fsync", lambda fd: (events.append("fsync"), real_fsync(fd))[1])
    monkeypatch.setattr(os, "rename", lambda *a, **k: (events.append("rename"), real_rename(*a, **k))[1])
    fsio.write_file(tmp_path, "f.txt", b"data")
    assert events == ["fsync", "rename", "fsync"]  # file, rename, then its directory


# modes come from the umask -------------------------------------------------------------------------------------------
@pytest.mark.parametrize(("mask", "plain", "executable"), [(0o022, 0o644, 0o755), (0o077, 0o600, 0o700),
                                                           (0o002, 0o664, 0o775), (0o027, 0o640, 0o750)])
def test_new_files_get_the_umask_mode(mask: int, plain: int, executable: int, tmp_path: Path, umask) -> None:
    umask(mask)
    fsio.write_file(tmp_path, "a/plain.txt", b"x")
    fsio.write_file(tmp_path, "a/tool.py", b"#!x", executable=True)
    fsio.write_file(tmp_path, "a/secret.md", b"token", private=True)
    write_junit(tmp_path / "junit.xml", Tally)
    log = ResultsLog(tmp_path / "results.jsonl")
    log.append(record())
    log.close()
    mode = lambda rel: stat.S_IMODE(os.stat(tmp_path / rel).st_mode)  # noqa: E731
    assert mode("a/plain.txt") == plain and mode("junit.xml") == plain and mode("results.jsonl") == plain
    assert mode("a/tool.py") == executable
    assert mode("a/secret.md") == 0o600  # holds secrets: never readable by others, whatever the umask
    assert mode("a") == executable  # directories made the same way: 0o777 minus the umask


def test_keep_mode_keeps_the_mode_of_a_users_file(tmp_path: Path, umask) -> None:
    umask(0o022)
    (tmp_path / "settings.json").write_text("{}")
    os.chmod(tmp_path / "settings.json", 0o600)
    fsio.write_file(tmp_path, "settings.json", b'{"a": 1}', keep_mode=True)
    assert stat.S_IMODE(os.stat(tmp_path / "settings.json").st_mode) == 0o600


# refusing what is not a regular file ---------------------------------------------------------------------------------
def make(kind: str, path: Path, outside: Path) -> None:
    if kind == "symlink":
        path.symlink_to(outside)
    elif kind == "dangling symlink":
        path.symlink_to(outside.parent / "nowhere")
    elif kind == "directory":
        path.mkdir()
    elif kind == "FIFO":
        os.mkfifo(path)
    elif kind == "device node":
        if os.geteuid() != 0:
            pytest.skip("creating a device node needs root")
        os.mknod(path, 0o600 | stat.S_IFCHR, os.makedev(1, 3))  # what /dev/null is


KINDS = ["symlink", "dangling symlink", "directory", "FIFO", "device node"]


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("writer", ["fsio", "junit", "memo", "results"])
def test_anything_but_a_regular_file_at_the_destination_is_refused(kind: str, writer: str, tmp_path: Path) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text("not yours")
    path = tmp_path / ".oac" / "dest"
    path.parent.mkdir()
    make(kind, path, outside)
    before = os.lstat(path)
    with pytest.raises(OacError, match="refusing to write") as info:
        if writer == "results":
            ResultsLog(path).append(record())
        else:
            WRITERS[writer](path, "new")
    assert "\n" not in str(info.value)
    after = os.lstat(path)
    assert (after.st_ino, after.st_mode) == (before.st_ino, before.st_mode)  # not replaced
    assert outside.read_text() == "not yours" and leftovers(tmp_path) == []


@pytest.mark.parametrize("writer", ["fsio", "memo", "results", "lock", "dir"])
def test_a_symlinked_directory_on_the_way_is_never_followed(writer: str, tmp_path: Path) -> None:
    project, elsewhere = tmp_path / "project", tmp_path / "elsewhere"
    project.mkdir()
    (elsewhere / "cache").mkdir(parents=True)
    (project / ".oac").symlink_to(elsewhere)  # a link planted in .oac/'s place
    path = project / ".oac" / "cache" / "file"
    with pytest.raises(OacError, match=r"\.oac is a symbolic link"):
        if writer == "fsio":
            fsio.write_file(project, ".oac/cache/file", b"x")
        elif writer == "memo":
            save_memo(path, _memo("x"))
        elif writer == "results":
            ResultsLog(path).append(record())
        elif writer == "lock":
            with fsio.exclusive_lock(project, ".oac/compile.lock"):
                pass
        else:
            fsio.ensure_dir(project, ".oac/cache/deeper")
    assert sorted(p.name for p in elsewhere.rglob("*")) == ["cache"]


def test_a_failed_write_leaves_no_temp_file_and_the_old_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fsio.write_file(tmp_path, "f.txt", b"old")

    def full(fd: int) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(os, "fsync", full)
    with pytest.raises(OacError, match=r"cannot write f\.txt: No space left on device"):
        fsio.write_file(tmp_path, "f.txt", b"new")
    assert (tmp_path / "f.txt").read_bytes() == b"old" and leftovers(tmp_path) == []


def test_an_interrupt_mid_write_leaves_no_temp_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def interrupted(fd: int) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "fsync", interrupted)
    with pytest.raises(KeyboardInterrupt):
        fsio.write_file(tmp_path, "f.txt", b"new")
    assert list(tmp_path.iterdir()) == []


def test_paths_leaving_the_root_are_refused(tmp_path: Path) -> None:
    for rel in ("../x", "/etc/passwd", "a/../../x", "."):
        with pytest.raises(OacError, match="refusing to write"):
            fsio.write_file(tmp_path / "root", rel, b"x")
    assert not (tmp_path / "x").exists()


def test_remove_and_prune_never_act_through_symlinks(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    (outside / "empty").mkdir(parents=True)
    (outside / "f.txt").write_text("keep")
    root = tmp_path / "root"
    root.mkdir()
    (root / "link").symlink_to(outside)
    assert not fsio.remove_empty_dir(root, "link/empty")
    assert not fsio.remove_empty_dir(root, "link")
    with pytest.raises(OacError, match="link is a symbolic link"):
        fsio.remove_file(root, "link/f.txt")
    assert (outside / "empty").is_dir() and (outside / "f.txt").read_text() == "keep" and (root / "link").is_symlink()


def test_trusted_root_starts_state_paths_at_the_project(tmp_path: Path) -> None:
    assert fsio.trusted_root(tmp_path / "p" / ".oac" / "build" / "c" / "x.md") == tmp_path / "p"
    assert fsio.trusted_root(tmp_path / "reports" / "junit.xml") == tmp_path / "reports"


# caches are verified -------------------------------------------------------------------------------------------------
def test_a_damaged_render_memo_entry_is_a_miss_with_a_warning(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    path = tmp_path / ".oac" / "render-memo" / "opencode.json"
    save_memo(path, _memo("permission: deny"))
    assert list(load_memo(path).entries.values()) == [b"permission: deny"]
    damaged = path.read_bytes().replace(b"permission: deny", b"permission: allow")  # framed as before
    path.write_bytes(damaged)
    assert load_memo(path).entries == {}
    assert "render-memo/opencode.json failed its integrity check; ignored" in capsys.readouterr().err


@given(st.dictionaries(st.text(), st.binary()))
def test_the_render_memo_payload_gives_back_its_entries(entries: dict[str, bytes]) -> None:
    assert memo_entries(memo_payload(entries)) == entries


@pytest.mark.parametrize("payload", [
    b'{"entries":{"k":"text"}}',  # the format before: rebuilt, never misread
    b"oac render memo 2\n" + b'[["k",5]]',  # no blob line
    b"oac render memo 2\n" + b'[["k",29]] ',  # no newline after the index, yet its length is the payload's
    b"oac render memo 2\n" + b'[["k",5]]\nabc',  # shorter than its index says
    b"oac render memo 2\n" + b'[["k",2]]\nabc',  # longer
    b"oac render memo 2\n" + b'[["k",-1]]\nabc',
    b"oac render memo 2\n" + b'[["k",true]]\n',
    b"oac render memo 2\n" + b'{"k":1}\nabc',
    b"oac render memo 2\n" + b'[[1,1]]\na',
    b"oac render memo 2\n" + b"not json\nabc",
])
def test_a_render_memo_payload_of_another_shape_is_a_miss(payload: bytes) -> None:
    assert memo_entries(payload) == {}


def test_an_older_render_memo_is_rebuilt_quietly(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    """A memo an earlier version wrote (JSON, its digest right) is a miss without a warning, then written anew."""
    from open_agent_compiler.model.hashing import digest_bytes

    path = tmp_path / ".oac" / "render-memo" / "opencode.json"
    path.parent.mkdir(parents=True)
    payload = b'{"entries":{"k":"permission: allow"}}'
    path.write_bytes(digest_bytes(payload).encode() + b"\n" + payload)
    assert load_memo(path).entries == {}
    assert capsys.readouterr().err == ""
    save_memo(path, _memo("permission: deny"))
    assert list(load_memo(path).entries.values()) == [b"permission: deny"]


_KEYS = st.text("0123456789abcdef", min_size=32, max_size=32)


@settings(max_examples=60, deadline=None)
@given(st.dictionaries(st.text(min_size=1, max_size=20), st.dictionaries(st.text(max_size=30), _KEYS | st.text())))
def test_the_key_cache_gives_back_what_was_saved(kept: dict[str, dict[str, str]]) -> None:
    """Packed or not (a test id with a newline, a key of another width), every scope reads back as saved."""
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / ".oac" / "key-cache" / "opencode.json"
        cache = KeyCache()
        cache.kept = kept
        save_key_cache(path, cache)
        assert load_key_cache(path).entries == kept


def test_a_damaged_key_cache_is_a_miss(tmp_path: Path) -> None:
    path = tmp_path / ".oac" / "key-cache" / "opencode.json"
    cache = KeyCache()
    cache.kept = {"scope": {"t1": "key-a"}}
    save_key_cache(path, cache)
    assert load_key_cache(path).entries == {"scope": {"t1": "key-a"}}
    path.write_bytes(path.read_bytes().replace(b"key-a", b"key-b"))
    assert load_key_cache(path).entries == {}


def test_a_truncated_cache_is_a_miss(tmp_path: Path) -> None:
    path = tmp_path / ".oac" / "key-cache" / "opencode.json"
    cache = KeyCache()
    cache.kept = {"scope": {"t1": "key-a"}}
    save_key_cache(path, cache)
    path.write_bytes(path.read_bytes()[:-3])
    assert load_key_cache(path).entries == {}


def test_build_sync_never_writes_through_a_planted_symlink(tmp_path: Path) -> None:
    from open_agent_compiler.tasks.build_sync import sync_build

    project, outside = tmp_path / "project", tmp_path / "outside"
    (project / ".oac").mkdir(parents=True)
    outside.mkdir()
    (project / ".oac" / "build").symlink_to(outside)
    with pytest.raises(OacError, match=r"\.oac/build is a symbolic link"):
        sync_build({"a.md": b"x"}, project / ".oac" / "build" / "c" / "d", {})
    assert list(outside.iterdir()) == []
    (project / ".oac" / "build").unlink()
    build = project / ".oac" / "build" / "c" / "d"
    stamps = sync_build({"a.md": b"x"}, build, {})
    (build / "a.md").unlink()
    (outside / "a.md").write_text("theirs")
    (build / "a.md").symlink_to(outside / "a.md")
    with pytest.raises(OacError, match="a symbolic link is in the way"):
        sync_build({"a.md": b"x"}, build, stamps)
    assert (outside / "a.md").read_text() == "theirs"


def test_relative_paths_are_taken_from_the_current_directory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    write_junit(Path("reports/junit.xml"), Tally)
    save_memo(Path(".oac/render-memo/opencode.json"), _memo("x"))
    assert (tmp_path / "reports/junit.xml").is_file() and (tmp_path / ".oac/render-memo/opencode.json").is_file()
    assert load_memo(Path(".oac/render-memo/opencode.json")).entries


@pytest.mark.parametrize("call", ["mkdir", "open"])
def test_a_read_only_or_full_disk_is_one_line(call: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    real = getattr(os, call)

    def failing(*args: object, **kwargs: object) -> object:
        if call == "open" and args and args[0] == tmp_path:
            return real(*args, **kwargs)  # the root itself opens; the step below it fails
        raise OSError(errno.EROFS, os.strerror(errno.EROFS))

    monkeypatch.setattr(os, call, failing)
    with pytest.raises(OacError, match="Read-only file system") as info:
        fsio.write_file(tmp_path, "new/dir/file.txt", b"x")
    monkeypatch.undo()
    assert "\n" not in str(info.value) and list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("segment", ["", ".", "..", "a/b", "a\x00b"])
def test_open_dir_refuses_a_segment_that_is_not_a_plain_name(segment: str, tmp_path: Path) -> None:
    # parts_under normalises what writers pass, but open_dir is the walk itself: it must never step out or up
    (tmp_path / "root").mkdir()
    with pytest.raises(fsio.UnsafePathError, match="not a plain path segment"):
        fsio.open_dir(tmp_path / "root", [segment, "x"], create=True, show="x")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["root"] and not any((tmp_path / "root").iterdir())
