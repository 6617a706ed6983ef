"""An engine that user code ends or wedges is still reported from outside (issue 32, defects 9 and 10): the
watchdog (`execution.watchdog`) turns `os._exit(0)` in a mock into one line and exit 2, and a mock stuck in C
code holding the GIL past `--timeout` into the engine killed, one line and exit 2; records already earned stay."""

import sys

import pytest

from engine_project import Project
from guard_project import guard_project

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the watchdog needs pidfds")
TESTS = ("--filter", "evaluator-test", "--filter", "mock-test")


@pytest.fixture
def proj(tmp_path) -> Project:
    return guard_project(tmp_path / "guard")


def earned_kept(proj: Project, stdout: str) -> None:
    """Every test the engine printed as ended has its record."""
    recorded = {record["test_id"].split("::")[-1] for record in proj.records()}
    for line in stdout.splitlines():
        for name in ("evaluator-test", "mock-test"):
            if name in line and ("PASS" in line or "FAIL" in line):
                assert name in recorded, (stdout, recorded)


def test_os_exit_zero_in_a_mock_is_exit_2_with_one_line(proj: Project) -> None:
    """The first repetition passes, the second ends the engine: the first one's record is kept."""
    proj.edit("mockmod.py", "# FAULT mock", "import os\n    if os.path.exists('answered-once'): os._exit(0)\n"
              "    open('answered-once', 'w').close()")
    done = proj.oac("test", "-v", "--filter", "mock-test", "--repeat", "2")
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stderr.count("\n") == 1 and "ended before the run did (exit status 0)" in done.stderr, done.stderr
    assert "mock-test" in done.stderr and "Traceback" not in done.stderr
    assert [record["status"] for record in proj.records()] == ["pass"]


def test_a_mock_holding_the_gil_past_its_deadline_is_stopped_from_outside(proj: Project) -> None:
    proj.edit("mockmod.py", "# FAULT mock", "import re; re.match(r'(a+)+$', 'a' * 64 + 'b')")
    done = proj.oac("test", "-v", "--timeout", "2", *TESTS, timeout=90)
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stderr.count("\n") == 1 and "could not be stopped" in done.stderr, done.stderr
    assert "mock-test" in done.stderr
    earned_kept(proj, done.stdout)


def test_a_clean_run_keeps_its_exit_code(proj: Project) -> None:
    done = proj.oac("test", *TESTS)
    assert done.returncode == 0, done.stdout + done.stderr
    proj.edit("mockmod.py", "# FAULT mock", "raise ValueError('no')")
    assert proj.oac("test", *TESTS).returncode == 1


def alive(pid: int) -> bool:
    """Running, not a zombie."""
    try:
        stat = open(f"/proc/{pid}/stat").read()
    except OSError:
        return False
    return stat[stat.rfind(")") + 2] not in "ZX"


def ends(pid: int, limit: float = 20) -> bool:
    """True once `pid` ended, waiting at most `limit` seconds on its pidfd."""
    import os
    import select

    try:
        handle = os.pidfd_open(pid)
    except ProcessLookupError:
        return True
    try:
        return bool(select.select([handle], [], [], limit)[0]) or not alive(pid)
    finally:
        os.close(handle)


DAEMON = '''import os, subprocess, time
        if not os.path.exists("handler-may-answer"):
            subprocess.run(["sh", "-c", "setsid sh -c 'echo $$ > daemon.tmp; mv daemon.tmp daemon.pid; exec sleep 300' &"])
            while True:
                time.sleep(3600)'''


def test_a_handlers_setsid_daemon_outliving_a_group_kill_is_killed_by_the_next_run(proj: Project) -> None:
    """Defect 11: every real handler runs marked by the run's pid file (`leftovers.handler_marker`)."""
    import os
    import signal
    import subprocess
    import threading
    from pathlib import Path

    from engine_project import OAC

    proj.edit("handlers/handled.py", "# FAULT handler", DAEMON)
    oac = subprocess.Popen([OAC, "test", "--filter", "handler-test"], cwd=proj.root, start_new_session=True,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    pidfile = proj.root / "daemon.pid"
    try:
        for _ in range(600):  # bounded: the handler writes it within seconds
            if pidfile.exists():
                break
            threading.Event().wait(0.05)
        daemon = int(pidfile.read_text())
        os.killpg(oac.pid, signal.SIGKILL)  # engine, watchdog, zygote, keeper: nobody of this run cleans up
        oac.wait(timeout=30)
        assert alive(daemon)  # a session of its own, reparented to init: only a next run can find it
        assert list((proj.root / ".oac" / "procs").iterdir())
        (proj.root / "handler-may-answer").write_text("")
        done = proj.oac("test", "--filter", "handler-test")
        assert done.returncode == 0, done.stdout + done.stderr
        assert ends(daemon), "the daemon of a killed run survived the next run"
        assert not list((proj.root / ".oac" / "procs").iterdir())
    finally:
        with __import__("contextlib").suppress(ProcessLookupError):
            os.killpg(oac.pid, signal.SIGKILL)
        if pidfile.exists():
            with __import__("contextlib").suppress(ProcessLookupError, ValueError):
                os.kill(int(pidfile.read_text()), signal.SIGKILL)



def test_os_exit_zero_under_doit_test_is_exit_2_with_one_line(proj: Project) -> None:
    """`doit test` (the project's dodo.py) runs under the same watchdog as `oac test`."""
    import subprocess
    from pathlib import Path

    proj.edit("mockmod.py", "# FAULT mock", "import os\n    os._exit(0)")
    doit = str(Path(sys.executable).with_name("doit"))
    done = subprocess.run([doit, "test"], cwd=proj.root, capture_output=True, text=True, timeout=300)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "ended before the run did (exit status 0)" in done.stderr and "mock-test" in done.stderr, done.stderr
    assert len([line for line in done.stderr.splitlines() if line.startswith("oac:")]) == 1, done.stderr
    assert "Traceback" not in done.stderr


def test_os_exit_zero_under_the_pytest_plugin_is_exit_2_with_one_line(proj: Project) -> None:
    """`pytest --oac` runs its items under the watchdog: pytest's own exit 0 is not what CI reads."""
    import subprocess

    proj.edit("mockmod.py", "# FAULT mock", "import os\n    os._exit(0)")
    done = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:randomly", "-p", "no:cacheprovider", "-q",
                           "--oac", "agents:registry", "--oac-config", "prod", "-k", "mock-test"],
                          cwd=proj.root, capture_output=True, text=True, timeout=300)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "ended before the run did (exit status 0)" in done.stderr and "mock-test" in done.stderr, done.stderr
    assert "Traceback" not in done.stderr


def test_a_pytest_session_run_in_process_is_not_split(proj: Project) -> None:
    """A program that runs pytest in its own process (pytester, an IDE runner) keeps its process: no watchdog."""
    import subprocess

    script = ("import os, sys, pytest\n"
              "code = pytest.main(['-p', 'no:randomly', '-p', 'no:cacheprovider', '-q', '--oac', 'agents:registry',"
              " '--oac-config', 'prod', '-k', 'evaluator-test'])\n"
              "print('AFTER', os.getpid(), int(code))\n")
    done = subprocess.run([sys.executable, "-c", script], cwd=proj.root, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.count("AFTER") == 1 and "AFTER" in done.stdout.splitlines()[-1], done.stdout


def test_without_working_pidfds_the_engine_runs_unwatched() -> None:
    """A kernel (or valgrind) whose pidfd_open fails: no fork, the engine runs as it would without a watchdog."""
    import subprocess

    script = ("import os\n"
              "def refused(*args): raise OSError(38, 'Function not implemented')\n"
              "os.pidfd_open = refused\n"
              "from open_agent_compiler.execution import watchdog\n"
              "watchdog.supervise()\n"
              "print('ENGINE', watchdog._area is None)\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert (done.returncode, done.stdout, done.stderr) == (0, "ENGINE True\n", ""), done
