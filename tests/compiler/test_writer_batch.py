"""The compile writer makes its files durable as one batch (issue 18): every temp file is written first, one sync
makes them durable, then they are renamed, a second sync makes the renames durable, and only then is the
manifest committed. No fsync per file."""

import os
from pathlib import Path

import pytest

from open_agent_compiler import fsio
from open_agent_compiler.compiler.manifest import MANIFEST_PATH
from open_agent_compiler.compiler.output import CompiledFile, CompiledOutput
from open_agent_compiler.compiler.writer import write_output

FILES = tuple(CompiledFile(path=f"agents/a{i}.md", content=f"agent {i}\n".encode()) for i in range(5))


def test_one_sync_before_the_renames_one_after_and_the_manifest_last(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    events: list[str] = []
    real_rename, real_fsync, real_sync = os.rename, os.fsync, fsio.sync_filesystem

    def rename(src: str, dst: str, **kwargs: object) -> None:
        events.append(f"rename {dst}")
        real_rename(src, dst, **kwargs)

    monkeypatch.setattr(os, "rename", rename)
    monkeypatch.setattr(os, "fsync", lambda fd: (events.append("fsync"), real_fsync(fd))[1])
    monkeypatch.setattr(fsio, "sync_filesystem", lambda fd: (events.append("sync"), real_sync(fd))[1])
    write_output(CompiledOutput(dialect="opencode", files=FILES), tmp_path, dialect="opencode")
    journal, rest = events[:3], events[3:]
    assert journal == ["fsync", "rename manifest.json", "fsync"]  # the journal, durable before any file
    assert rest[0] == "sync" and rest[-4:] == ["sync", "fsync", "rename manifest.json", "fsync"]
    assert sorted(rest[1:-4]) == sorted(f"rename {f.path.rsplit('/', 1)[1]}" for f in FILES)  # no fsync per file
    assert all((tmp_path / f.path).read_bytes() == f.content for f in FILES)
    assert (tmp_path / MANIFEST_PATH).is_file()


def test_a_failed_sync_renames_nothing_and_leaves_no_temp_file(tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    import errno

    from open_agent_compiler.errors import OacError

    write_output(CompiledOutput(dialect="opencode", files=FILES), tmp_path, dialect="opencode")
    changed = tuple(f.model_copy(update={"content": f.content + b"v2\n"}) for f in FILES)

    def failing(fd: int) -> None:
        raise OSError(errno.EIO, os.strerror(errno.EIO))

    monkeypatch.setattr(fsio, "sync_filesystem", failing)
    with pytest.raises(OacError, match="Input/output error"):
        write_output(CompiledOutput(dialect="opencode", files=changed), tmp_path, dialect="opencode")
    monkeypatch.undo()
    assert all((tmp_path / f.path).read_bytes() == f.content for f in FILES)  # the old state, whole
    assert [p.name for p in tmp_path.rglob("*") if p.name.endswith(fsio.TEMP_SUFFIX)] == []
    report = write_output(CompiledOutput(dialect="opencode", files=changed), tmp_path, dialect="opencode")
    assert sorted(report.written) == sorted(f.path for f in FILES) and report.kept == ()
