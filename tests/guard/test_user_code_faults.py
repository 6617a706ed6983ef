"""Seven kinds of user code × faults, all handled the same way (issue 15: one loader, one read tracker).

Kinds: the registry factory, a callable mock, a real handler, a custom evaluator, a model script, a judge
factory and an invoker factory (see guard_project). Faults, one row each in `FAULTS`:
- `sys_exit`: the user's code calls `sys.exit(3)`. Where it runs outside a test (factory, judge and invoker
  factories) `oac test` is one line and exit 2; inside a test the test FAILs naming the exit. Never exit 0.
- `helper`: a project module the code imports is edited: the green test runs again (and now fails), and
  `--explain` names the key part that carries it.
- `data`: a data file the code reads is edited: the same.
The blocking-call fault (one deadline) belongs to the process-keeper work: add a row to `FAULTS` and an
`expect_*` function; every kind then runs through it.
"""

import re
import subprocess
import sys
from pathlib import Path

import pytest

from engine_project import SUMMARY, Project, summary_line
from guard_project import DATA, KINDS, MODULE, RUN, guard_project

DOIT = str(Path(sys.executable).with_name("doit"))
LOAD_TIME = {"factory", "judge", "invoker"}  # runs while the run is planned, not inside a test
# the key part `--explain` names when the helper of a kind changes (a data file read at run time is a file)
HELPER_PART = {"mock": "file mock_helper.py", "handler": "file handler_helper.py",
               "evaluator": "file evaluator_helper.py", "script": "invoker", "judge": "judge", "invoker": "invoker"}


@pytest.fixture
def proj(tmp_path: Path) -> Project:
    return guard_project(tmp_path / "guard")


def oac_test(proj: Project, kind: str, *extra: str) -> subprocess.CompletedProcess:
    args = RUN.get(kind, ("--filter", "mock-test"))
    return proj.oac("test", "-v", *args, *extra)


def doit_compile(proj: Project) -> str:
    done = subprocess.run([DOIT, "compile"], cwd=proj.root, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def expect_sys_exit(proj: Project, kind: str) -> None:
    proj.edit(MODULE[kind], f"# FAULT {kind}", "import sys; sys.exit(3)")
    done = oac_test(proj, kind)
    assert "Traceback" not in done.stdout + done.stderr
    if kind in LOAD_TIME:
        assert done.returncode == 2, done.stdout + done.stderr
        assert done.stderr.count("\n") == 1 and "sys.exit(3)" in done.stderr, done.stderr
        assert not proj.records()  # nothing ran
    else:
        assert done.returncode == 1, done.stdout + done.stderr
        assert summary_line(done.stdout) == SUMMARY.format(1, 0, 1, 0, 0)
        assert re.search(r"sys\.exit\(3\)|SystemExit: 3", done.stdout), done.stdout
        assert [r["status"] for r in proj.records()] == ["fail"]


def _edit_reruns(proj: Project, kind: str, path: str, old: str, new: str, part: str) -> None:
    if kind == "factory":  # the factory's inputs are the compile task's: `doit compile` must not be up to date
        assert ".  compile:prod:opencode:out" in doit_compile(proj)
        assert "-- compile:prod:opencode:out" in doit_compile(proj)
        proj.edit(path, old, new)
        assert ".  compile:prod:opencode:out" in doit_compile(proj)
        return
    first = oac_test(proj, kind)
    assert summary_line(first.stdout) == SUMMARY.format(1, 1, 0, 0, 0), first.stdout + first.stderr
    assert summary_line(oac_test(proj, kind).stdout) == SUMMARY.format(1, 0, 0, 1, 0)  # green: skipped
    proj.edit(path, old, new)
    edited = oac_test(proj, kind, "--explain")
    assert summary_line(edited.stdout) == SUMMARY.format(1, 0, 1, 0, 0), edited.stdout + edited.stderr
    assert part in edited.stdout, edited.stdout


def expect_helper_edit_reruns(proj: Project, kind: str) -> None:
    _edit_reruns(proj, kind, f"{kind}_helper.py", "N = 1", "N = 2", HELPER_PART.get(kind, ""))


def expect_data_edit_reruns(proj: Project, kind: str) -> None:
    _edit_reruns(proj, kind, DATA[kind], "1" if kind != "factory" else "agent", "2" if kind != "factory" else "bot",
                 f"file {DATA[kind]}")


FAULTS = {
    "sys_exit": expect_sys_exit,
    "helper": expect_helper_edit_reruns,
    "data": expect_data_edit_reruns,
    # "blocking": expect_deadline,  ← the one-deadline work adds this row
}


@pytest.mark.parametrize("fault", sorted(FAULTS))
@pytest.mark.parametrize("kind", KINDS)
def test_every_kind_of_user_code_through_every_fault(proj: Project, kind: str, fault: str) -> None:
    FAULTS[fault](proj, kind)
