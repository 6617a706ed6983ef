"""Ownership the mutation audit found unguarded (issue 15): a file of ours a user edited stays ours, and a
symbolic link planted at one of our paths is never removed."""

import json
import os
from pathlib import Path

from open_agent_compiler import fsio
from open_agent_compiler.compiler.manifest import MANIFEST_PATH
from open_agent_compiler.compiler.output import CompiledFile, CompiledOutput
from open_agent_compiler.compiler.writer import CHANGED, LINK, write_output

PATH = "agents/a.md"


def output(*files: tuple[str, bytes]) -> CompiledOutput:
    return CompiledOutput(dialect="opencode", files=tuple(CompiledFile(path=p, content=c) for p, c in files))


def owned(target: Path) -> dict[str, str]:
    return json.loads((target / MANIFEST_PATH).read_text())["dialects"]["opencode"]["files"]


def test_an_edited_file_of_ours_is_taken_back_when_its_bytes_return(tmp_path: Path) -> None:
    write_output(output((PATH, b"v1\n")), tmp_path, dialect="opencode")
    (tmp_path / PATH).write_bytes(b"the user's edit\n")
    report = write_output(output((PATH, b"v2\n")), tmp_path, dialect="opencode")
    assert [(k.path, k.reason) for k in report.kept] == [(PATH, CHANGED)]
    assert PATH in owned(tmp_path)  # still ours, under the digest of the bytes we wrote
    (tmp_path / PATH).write_bytes(b"v1\n")  # the user undoes the edit
    report = write_output(output((PATH, b"v2\n")), tmp_path, dialect="opencode")
    assert report.written == (PATH,) and report.kept == ()
    assert (tmp_path / PATH).read_bytes() == b"v2\n"


def test_remove_file_never_unlinks_a_symlink_at_our_path(tmp_path: Path) -> None:
    (tmp_path / "real.md").write_text("the user's file")
    (tmp_path / "ours.md").symlink_to(tmp_path / "real.md")
    assert fsio.remove_file(tmp_path, "ours.md") is False
    assert (tmp_path / "ours.md").is_symlink() and (tmp_path / "real.md").read_text() == "the user's file"


def test_a_symlink_planted_at_a_stale_or_cleaned_path_of_ours_stays(tmp_path: Path) -> None:
    write_output(output((PATH, b"v1\n"), ("agents/b.md", b"b\n")), tmp_path, dialect="opencode")
    for rel in (PATH, "agents/b.md"):
        (tmp_path / rel).unlink()
        os.symlink(tmp_path / "elsewhere.md", tmp_path / rel)
    (tmp_path / "elsewhere.md").write_text("v1\n")  # even with our bytes behind it
    write_output(output(("agents/b.md", b"b\n")), tmp_path, dialect="opencode")  # agents/a.md is stale now
    report = write_output(output(("agents/b.md", b"b\n")), tmp_path, dialect="opencode", clean=True)
    assert (tmp_path / PATH).is_symlink() and (tmp_path / "agents/b.md").is_symlink()
    assert ("agents/b.md", LINK) in [(k.path, k.reason) for k in report.kept] or report.removed == ()
    assert (tmp_path / "elsewhere.md").read_text() == "v1\n"
