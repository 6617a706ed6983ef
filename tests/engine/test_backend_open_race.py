"""Several processes opening one new state database at once (pytest-xdist workers starting together): each must
open it. Switching a new SQLite file to WAL needs it to itself and a second process got "database is locked" at
once, without a busy wait (the xdist session test failed one run in three or six); `OacStateDB._open` now holds
an flock around it. The openers start together behind a pipe, released once every one has said it is ready."""

import os
import subprocess
import sys
from pathlib import Path

OPENERS = 6
TRIALS = 8  # without the lock about half the trials failed: all eight passing by chance is ~0.4 %

OPENER = '''
import os, sys
from open_agent_compiler.tasks.backend import OacStateDB
os.write(int(sys.argv[2]), b"r")  # ready: imported
os.read(int(sys.argv[3]), 1)  # the gate
try:
    OacStateDB(sys.argv[1])._conn.close()
    print("ok")
except BaseException as exc:
    print("FAIL", type(exc).__name__, exc)
'''


def test_processes_opening_one_new_state_database_together_all_open_it(tmp_path: Path) -> None:
    for trial in range(TRIALS):
        db = tmp_path / f"t{trial}" / ".oac" / "doit-state.sqlite3"
        ready_r, ready_w = os.pipe()
        gate_r, gate_w = os.pipe()
        procs = [subprocess.Popen([sys.executable, "-c", OPENER, str(db), str(ready_w), str(gate_r)],
                                  stdout=subprocess.PIPE, text=True, pass_fds=(ready_w, gate_r))
                 for _ in range(OPENERS)]
        os.close(ready_w)
        os.close(gate_r)
        got = b""
        while len(got) < OPENERS:
            chunk = os.read(ready_r, OPENERS)
            assert chunk, "an opener died before it was ready"
            got += chunk
        os.write(gate_w, b"g" * OPENERS)
        os.close(gate_w)
        os.close(ready_r)
        outs = [proc.communicate(timeout=120)[0].strip() for proc in procs]
        assert outs == ["ok"] * OPENERS, (trial, outs)
        assert sorted(p.name for p in db.parent.iterdir() if "lock" in p.name) == []  # no lock file stays behind
