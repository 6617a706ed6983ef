"""Harness processes run under the handlers' keeper: kill -9 of `oac` mid-turn leaves no harness process and no
scratch folder (the keeper cleans at once; when it was killed too, the next run cleans by pid file).

A fake harness binary (a small script standing in for `opencode`) keeps these tests independent of real
harnesses: it reports its pid, its scratch folder and a grandchild in a session of its own, then hangs.
"""

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "agents"))
from agent_project import OAC, REPO  # noqa: E402

FAKE = '''#!{python}
import json, os, subprocess, sys, time
grandchild = subprocess.Popen(["sleep", "300"], start_new_session=True)  # outlives its parent's group
report = {{"pid": os.getpid(), "grandchild": grandchild.pid, "scratch": os.environ.get("OAC_SCRATCH"),
          "cwd": os.getcwd()}}
with open({report!r} + ".tmp", "w") as out:
    out.write(json.dumps(report))
os.rename({report!r} + ".tmp", {report!r})
time.sleep(300)
'''


def alive(pid: int) -> bool:
    """A process that exists and is not a zombie (a killed orphan may wait for a reaper that never comes)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat[stat.rfind(")") + 2] not in "ZX"


def wait_for(condition, within: float = 20.0) -> bool:
    """Bounded polling for a condition that another process makes true."""
    end = time.monotonic() + within
    while time.monotonic() < end:
        if condition():
            return True
        threading.Event().wait(0.05)
    return condition()


@pytest.fixture
def project(tmp_path: Path):
    import shutil

    root = tmp_path / "project"
    shutil.copytree(REPO / "examples" / "quickstart", root, ignore=shutil.ignore_patterns(".oac", "__pycache__"))
    report = tmp_path / "harness.json"
    fake = tmp_path / "fake-opencode"
    fake.write_text(FAKE.format(python=sys.executable, report=str(report)))
    fake.chmod(0o755)
    harnesses = tmp_path / "harnesses"
    harnesses.mkdir()
    (harnesses / "status.json").write_text(json.dumps(
        {"harnesses": {"opencode": {"available": True, "bin": str(fake), "version": "fake-1"}}}))
    env = dict(os.environ, HARNESS_DIR=str(harnesses))
    return root, report, env


def start_oac(root: Path, env: dict) -> subprocess.Popen:
    return subprocess.Popen([OAC, "test", "agents:registry", "--config", "prod", "--invoker", "opencode",
                             "--filter", "echo-conversation"], cwd=root, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, start_new_session=True)


def mid_turn(report: Path) -> dict:
    assert wait_for(report.is_file, 60), "the fake harness never started"
    seen = json.loads(report.read_text())
    assert seen["scratch"] and Path(seen["cwd"]).is_relative_to(seen["scratch"])
    assert alive(seen["pid"]) and alive(seen["grandchild"]) and Path(seen["scratch"]).is_dir()
    return seen


def test_kill_9_of_oac_mid_turn_leaves_no_harness_process_nor_scratch_folder(project) -> None:
    root, report, env = project
    oac = start_oac(root, env)
    try:
        seen = mid_turn(report)
        os.kill(oac.pid, signal.SIGKILL)  # the engine only: its harness's keeper sees the lifeline close
        oac.communicate(timeout=30)
        assert wait_for(lambda: not alive(seen["pid"]) and not alive(seen["grandchild"]))
        assert wait_for(lambda: not Path(seen["scratch"]).exists())  # with the harness config (and any key)
    finally:
        for pid in (oac.pid,):
            with __import__("contextlib").suppress(ProcessLookupError):
                os.killpg(pid, signal.SIGKILL)


def test_what_a_killed_process_group_left_is_cleaned_by_the_next_run_by_pid_file(project) -> None:
    root, report, env = project
    oac = start_oac(root, env)
    try:
        seen = mid_turn(report)
        os.killpg(oac.pid, signal.SIGKILL)  # engine, zygote and keeper at once: nobody cleans this run
        oac.communicate(timeout=30)
        assert wait_for(lambda: not alive(seen["pid"]))  # the harness dies with its keeper (parent-death signal)
        assert alive(seen["grandchild"]) and Path(seen["scratch"]).is_dir()  # what only a next run can clean
        assert list((root / ".oac" / "procs").iterdir())  # the pid file that names it
        report.unlink()
        done = subprocess.run([OAC, "test", "agents:registry", "--config", "prod", "--kind", "tool"], cwd=root,
                              env=env, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stdout + done.stderr
        assert wait_for(lambda: not alive(seen["grandchild"]))
        assert not Path(seen["scratch"]).exists()
        assert not list((root / ".oac" / "procs").iterdir())
    finally:
        with __import__("contextlib").suppress(ProcessLookupError):
            os.killpg(oac.pid, signal.SIGKILL)
        if report.is_file():
            with __import__("contextlib").suppress(ProcessLookupError, ValueError, KeyError):
                os.kill(json.loads(report.read_text())["grandchild"], signal.SIGKILL)


def test_a_pid_file_of_a_live_run_or_not_ours_is_left_alone(tmp_path: Path) -> None:
    from open_agent_compiler.execution import leftovers

    procs = tmp_path / ".oac" / "procs"
    procs.mkdir(parents=True)
    outside = tmp_path / "not-a-scratch"
    outside.mkdir()
    live, _ = leftovers.make_scratch(tmp_path)  # this process: alive
    (procs / "forged.json").write_text(json.dumps({"pid": 999999999, "started": "1", "scratch": str(outside)}))
    try:
        assert leftovers.clean(tmp_path) == []
        assert live.is_dir() and outside.is_dir()  # neither a live run's folder nor one that is not a scratch
        assert [p.name for p in procs.iterdir() if p.name != "forged.json"]  # the live run's pid file stays
    finally:
        import shutil

        shutil.rmtree(live, ignore_errors=True)


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_to_oac_mid_turn_stops_the_harness_and_removes_its_scratch(signum: int, project) -> None:
    root, report, env = project
    oac = start_oac(root, env)
    try:
        seen = mid_turn(report)
        os.kill(oac.pid, signum)
        oac.communicate(timeout=60)
        assert oac.returncode == 128 + signum
        assert wait_for(lambda: not alive(seen["pid"]) and not alive(seen["grandchild"]))
        assert wait_for(lambda: not Path(seen["scratch"]).exists())
    finally:
        with __import__("contextlib").suppress(ProcessLookupError):
            os.killpg(oac.pid, signal.SIGKILL)


@pytest.mark.harness
def test_kill_9_of_oac_mid_turn_of_real_opencode_leaves_nothing(tmp_path: Path) -> None:
    """The same with the real `opencode` (skipped when it is not installed): its whole tree goes."""
    import shutil

    from open_agent_compiler.execution import leftovers

    harnesses = Path(os.environ.get("HARNESS_DIR", Path.home() / ".cache" / "oac" / "harnesses"))
    try:
        entry = json.loads((harnesses / "status.json").read_text())["harnesses"]["opencode"]
    except (OSError, ValueError, KeyError):
        pytest.skip(f"opencode: no entry in {harnesses}/status.json: run .ci/install-harnesses")
    if not entry.get("available") or not Path(entry.get("bin", "")).exists():
        pytest.skip("opencode: binary missing")
    root = tmp_path / "project"
    shutil.copytree(REPO / "examples" / "quickstart", root, ignore=shutil.ignore_patterns(".oac", "__pycache__"))
    (root / "agents_scripts.py").write_text("import threading\n\n\ndef hang(view):\n    threading.Event().wait()\n\n\n"
                                            "SCRIPTS = {'echo-conversation': hang}\n")
    oac = start_oac(root, dict(os.environ, HARNESS_DIR=str(harnesses)))
    try:
        procs = root / ".oac" / "procs"
        assert wait_for(lambda: procs.is_dir() and any(procs.iterdir()), 60)
        scratch = json.loads(next(procs.iterdir()).read_text())["scratch"]
        marked = lambda: [int(p) for p in os.listdir("/proc") if p.isdigit() and alive(int(p))  # noqa: E731
                          and leftovers._marked(int(p), scratch)]
        assert wait_for(lambda: len(marked()) > 0, 60)  # opencode runs (and asks the hanging model)
        os.kill(oac.pid, signal.SIGKILL)
        oac.communicate(timeout=30)
        assert wait_for(lambda: not marked(), 20), marked()
        assert wait_for(lambda: not Path(scratch).exists())
    finally:
        with __import__("contextlib").suppress(ProcessLookupError):
            os.killpg(oac.pid, signal.SIGKILL)
