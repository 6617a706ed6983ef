"""`pytest --oac` with the green state shared on PostgreSQL: the shared state is opened once per pytest session
(not once per item), what one machine's pytest proved is green on another machine's pytest and `oac test`."""

import json
import subprocess
import sys

from engine_project import SUMMARY, counting_conftest, green_skips, inner_pytest_env, summary_line
from shared_project import ALL, clone, make

COUNTING_CONFTEST = counting_conftest(
    "from open_agent_compiler.tasks import shared_session, shared_store",
    ("shared_session.SharedSession", "open", "opened"), ("shared_store.SharedStore", "connect", "connected"),
    ("shared_session.SharedSession", "close", "closed"))


ONCE = {"opened": 1, "connected": 1, "closed": 1}


def pytest_oac(root, env, *args):
    done = subprocess.run([sys.executable, "-m", "pytest", "-rs", "-p", "no:randomly", "-p", "no:cacheprovider",
                           "--oac", *args], cwd=root, capture_output=True, text=True, timeout=300, env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    return done


def test_pytest_opens_the_shared_state_once_per_session_and_shares_greens_across_machines(pg, tmp_path):
    env = inner_pytest_env(**pg.env(pg.database))
    env.pop("OAC_HERMETIC", None)
    first = make(tmp_path / "first")
    first.write("conftest.py", COUNTING_CONFTEST)
    done = pytest_oac(first.root, env)
    assert f"{len(ALL)} passed" in done.stdout
    assert json.loads((first.root / "counts-main.json").read_text()) == ONCE
    second = clone(first, tmp_path / "second")  # another machine: none of the first one's local state
    done = pytest_oac(second.root, env)
    assert f"{len(ALL)} skipped" in done.stdout and green_skips(done.stdout) == len(ALL)
    assert sorted(second.executions()) == []  # nothing ran: every key was proved by the first machine's pytest
    assert json.loads((second.root / "counts-main.json").read_text()) == ONCE
    after = second.test(env=pg.env(pg.database))
    assert summary_line(after.stdout) == SUMMARY.format(len(ALL), 0, 0, len(ALL), 0)
