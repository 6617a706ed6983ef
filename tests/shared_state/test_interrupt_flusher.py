"""Ctrl-C while the state flusher thread is being started (issue 32/33), end to end: the real `oac test` with shared
state on a real PostgreSQL gets SIGINT after the flusher's Thread object exists and before it runs. A hook loaded
only by this test (a sitecustomize on PYTHONPATH, gated by an environment variable) makes the process stop there
and say so through a FIFO; the test then sends SIGINT. No sleep: the process cannot leave that point on its own."""

import os
import re
import signal
import subprocess
from pathlib import Path

from engine_project import OAC, SUMMARY, summary_line
from shared_project import make
from test_shared_state import outcomes

HOOK = '''
import os
import threading

_fifo = os.environ.get("OAC_TEST_FLUSHER_FIFO")
if _fifo:
    _real_start = threading.Thread.start

    def _start(self):
        if self.name == "oac-state-flush" and threading.current_thread() is threading.main_thread():
            threading.Thread.start = _real_start  # once
            with open(_fifo, "w") as reached:  # (a FIFO: blocks until the test reads it)
                reached.write(str(os.getpid()))
            with open(_fifo + ".never"):  # no writer ever opens it: the SIGINT lands here, the thread not started
                pass
        return _real_start(self)

    threading.Thread.start = _start
'''


def parent_of(pid: int) -> int:
    stat = Path(f"/proc/{pid}/stat").read_text()
    return int(stat[stat.rfind(")") + 2:].split()[1])


def test_ctrl_c_while_the_flusher_starts_exits_130_with_one_line_and_keeps_what_finished(pg, tmp_path: Path) -> None:
    project = make(tmp_path / "proj")
    hooks = tmp_path / "hooks"
    hooks.mkdir()
    (hooks / "sitecustomize.py").write_text(HOOK)
    fifo = tmp_path / "reached"
    os.mkfifo(fifo)
    os.mkfifo(f"{fifo}.never")
    env = {**os.environ, **pg.env(pg.database), "OAC_TEST_FLUSHER_FIFO": str(fifo),
           "PYTHONPATH": os.pathsep.join(filter(None, [str(hooks), os.environ.get("PYTHONPATH")]))}
    env.pop("OAC_HERMETIC", None)
    process = subprocess.Popen([OAC, "test", "agents:registry", "--config", "prod", "-v"], cwd=project.root,
                               env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        with open(fifo) as reached:  # returns once the process is at the flusher's start (first result saved)
            engine = int(reached.read())  # the engine: `oac` itself, or its child under the watchdog
            assert engine == process.pid or parent_of(engine) == process.pid, (engine, process.pid)
        process.send_signal(signal.SIGINT)
        stdout, stderr = process.communicate(timeout=120)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    assert process.returncode == 130, stdout + stderr
    assert "Traceback" not in stderr and "Error" not in stderr, stderr
    # the test whose save started the flusher finished: it is reported and counted (doit saves before it reports)
    assert stderr == "oac: interrupted by SIGINT; 3 of 4 tests did not run\n", stderr
    assert len(re.findall(r"^  pass '", stdout, re.M)) == 1, stdout

    # the one test that had finished is kept: its record, its local green, its outcome in the shared state
    records = project.records()
    assert [record["status"] for record in records] == ["pass"], records
    shared = outcomes(pg)
    assert list(shared.values()) == ["pass"] and records[0]["test_id"] in next(iter(shared))[0], shared
    done = project.test(env=pg.env(pg.database))
    assert summary_line(done.stdout) == SUMMARY.format(4, 3, 0, 1, 0), done.stdout + done.stderr
