"""Unusable state under `.oac/`, a full disk, output nobody reads: one line naming the path, exit 2, no
traceback, nothing half-written."""

import os
import resource
import signal
import sqlite3
import subprocess
from pathlib import Path

import pytest

from cli_project import ARGS, oac, oac_piped, one_line, quickstart

from open_agent_compiler.errors import OacError
from open_agent_compiler.tasks.settings import build_options
from open_agent_compiler.tasks.state_paths import StateError, on_state


def _file(path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("not oac's\n")


def _folder(path: Path) -> None:
    path.mkdir(parents=True)


@pytest.mark.parametrize(("make", "rel", "culprit"), [
    (_file, ".oac", ".oac"),
    (_folder, ".oac/doit-state.sqlite3", "doit-state.sqlite3"),
    (_folder, ".oac/test_results.jsonl", "test_results.jsonl"),
    (_file, ".oac/build", ".oac/build"),
    (_file, ".oac/build/prod", ".oac/build/prod"),
])
def test_unusable_state_path_is_one_line_before_anything_runs(make, rel: str, culprit: str, tmp_path: Path) -> None:
    root = quickstart(tmp_path)
    make(root / rel)
    before = sorted(p.relative_to(root).as_posix() for p in root.rglob("*"))
    done = oac(root, "test", *ARGS)
    one_line(done, culprit, "is not a directory" if make is _file else "is a directory, but oac needs a file")
    assert "discovered=" not in done.stdout  # refused before any test ran
    assert sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if "__pycache__" not in p.parts) == \
        [p for p in before if "__pycache__" not in p]


@pytest.mark.parametrize(("make", "rel"), [
    (_folder, ".oac/render-memo/opencode.json"), (_folder, ".oac/key-cache/opencode.json"),
    (_file, ".oac/render-memo"), (_file, ".oac/key-cache"),
])
def test_a_cache_that_cannot_be_used_only_costs_time(make, rel: str, tmp_path: Path) -> None:
    """Issue 32, defect 15: the run goes on without the cache (a warning names it); what is in the way stays."""
    root = quickstart(tmp_path)
    make(root / rel)
    done = oac(root, "test", *ARGS)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "discovered=" in done.stdout and "Traceback" not in done.stderr
    assert "cache not saved" in done.stderr and rel.split("/")[-1] in done.stderr, done.stderr
    assert (root / rel).is_dir() if make is _folder else (root / rel).read_text() == "not oac's\n"
    assert oac(root, "test", *ARGS).returncode == 0  # and again: never worse than a miss


def test_junit_path_that_is_a_directory_is_refused_before_the_run(tmp_path: Path) -> None:
    root = quickstart(tmp_path)
    (root / "reports" / "junit.xml").mkdir(parents=True)
    one_line(oac(root, "test", *ARGS, "--junit", "reports/junit.xml"), "reports/junit.xml", "is a directory")
    assert not (root / ".oac" / "test_results.jsonl").exists()


def test_a_compiled_path_blocked_inside_the_build_names_that_path(tmp_path: Path) -> None:
    root = quickstart(tmp_path)
    assert oac(root, "test", *ARGS).returncode == 0
    blocked = root / ".oac/build/prod/opencode/.opencode/agents/primary.md"
    blocked.unlink()
    blocked.mkdir()
    done = oac(root, "test", *ARGS, "--force")
    assert "Traceback" not in done.stdout + done.stderr
    errors = [line for line in done.stdout.splitlines() if line.startswith("  ERROR ")]
    assert len(errors) == 1 and str(blocked) in errors[0] and "directory" in errors[0], done.stdout
    fails = [line for line in done.stdout.splitlines() if line.startswith("  FAIL ")]
    # the agent test runs from the build; the capability tests judge the compiled bytes in memory and pass
    assert len(fails) == 1 and "'echo-conversation'" in fails[0] and "compile task failed: " in fails[0] \
        and str(blocked) in fails[0], done.stdout
    assert done.returncode != 0


def test_read_only_state_folder_is_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # root ignores file modes, so the permission answer is what is simulated here
    root = quickstart(tmp_path)
    (root / ".oac").mkdir()
    real_access = os.access
    monkeypatch.setattr(os, "access", lambda path, mode: False if Path(path) == root / ".oac" else real_access(path, mode))
    with pytest.raises(StateError, match=r"cannot write .*\.oac: read-only"):
        build_options(root, {"factory": "agents:registry", "config": "prod"})


def _limit_file_size(limit: int):  # type: ignore[no-untyped-def]
    def apply() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # writes past the limit fail with EFBIG, as on a full disk
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
    return apply


@pytest.mark.parametrize("limit", [0, 4096, 20_000])
def test_a_full_disk_is_one_line_naming_the_file(limit: int, tmp_path: Path) -> None:
    root = quickstart(tmp_path)
    done = oac(root, "test", *ARGS, preexec_fn=_limit_file_size(limit))
    line = one_line(done, str(root / ".oac"))
    assert "File too large" in line or "disk I/O error" in line or "full" in line, line
    assert not [p for p in (root / ".oac").rglob("*.tmp")]


def test_state_errors_name_the_destination_of_a_failed_rename(tmp_path: Path) -> None:
    with pytest.raises(StateError, match=r"cannot write the cache /x/final.json: Is a directory"):
        with on_state(tmp_path, "write the cache"):
            raise IsADirectoryError(21, "Is a directory", "/x/.final.json.tmp", None, "/x/final.json")
    with pytest.raises(StateError, match=r"cannot open the state database .*db: disk I/O error"):
        with on_state(tmp_path / "db", "open the state database"):
            raise sqlite3.OperationalError("disk I/O error")
    assert issubclass(StateError, OacError)


def test_output_cut_by_head_ends_quietly_with_the_runs_own_code(tmp_path: Path) -> None:
    root = quickstart(tmp_path)
    done = oac(root, "test", *ARGS, "-v", "--force")  # reference: every record
    assert done.returncode == 0
    records = (root / ".oac/test_results.jsonl").read_text().count("\n")
    for reader in ("head -1", "head -c 0"):
        piped, code = oac_piped(root, f"test {' '.join(ARGS)} -v --force | {reader}")
        assert piped.stderr == "", piped.stderr  # no traceback, no "Broken pipe" line
        assert code == 0  # the run's own verdict: every test passed
    # nothing lost: every test still appended its record although nobody read the output
    assert (root / ".oac/test_results.jsonl").read_text().count("\n") == records * 3


def test_full_standard_output_is_one_line_not_a_traceback(tmp_path: Path) -> None:
    root = quickstart(tmp_path)
    with open("/dev/full", "w") as full:
        done = oac(root, "test", *ARGS, "-v", stdout=full, stderr=subprocess.PIPE)
    assert "Traceback" not in done.stderr and done.returncode == 2, done.stderr
    assert done.stderr.strip() == "oac: cannot write standard output: No space left on device"


def test_read_only_results_file_is_one_line_before_the_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = quickstart(tmp_path)
    results = root / ".oac" / "test_results.jsonl"
    _file(results)
    real_access = os.access  # root ignores file modes: say the file is read-only as the OS would
    monkeypatch.setattr(os, "access", lambda path, mode: False if Path(path) == results else real_access(path, mode))
    with pytest.raises(StateError, match=r"cannot write .*test_results\.jsonl: read-only"):
        build_options(root, {"factory": "agents:registry", "config": "prod"})
