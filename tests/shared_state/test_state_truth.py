"""Issue 33 on a real PostgreSQL: the last *finished* outcome wins, the outbox empties, a silent server is given
up, multi-host URLs work, prune's bare number is days."""

import os
import socket
import sqlite3
import threading
from pathlib import Path

import pytest
from engine_project import SUMMARY, summary_line
from pg_server import PASSWORD
from shared_project import make

T1, T2, T3 = "2026-12-04T10:00:00.000+00:00", "2026-12-04T11:00:00.000+01:00", "2026-12-04T10:00:01.000+00:00"


def store(pg, monkeypatch, url: str | None = None):
    from open_agent_compiler.tasks.shared_store import SharedStore

    monkeypatch.setenv("PGPASSWORD", PASSWORD)
    return SharedStore(url or pg.url(pg.database), "demo").connect()


def status_of(shared, task="t", key="k"):
    return shared.fetch([task])[task][key].status


def test_an_older_outcome_pushed_later_never_overwrites_a_newer_one(pg, monkeypatch):
    from open_agent_compiler.tasks.shared_store import Outcome

    shared = store(pg, monkeypatch)
    try:
        shared.push([Outcome("t", "k", "fail", T3, None, 1.0)])  # recorded first, finished last (10:00:01 UTC)
        shared.push([Outcome("t", "k", "pass", T1, None, 1.0)])  # an offline runner's pass of 10:00:00, pushed later
        assert status_of(shared) == "fail"
        shared.push([Outcome("t", "k", "pass", T2, None, 1.0)])  # 11:00+01:00 is 10:00 UTC: older still (offsets)
        assert status_of(shared) == "fail"
        shared.push([Outcome("t", "k", "pass", T3, None, 1.0)])  # the same time: the failure stays
        assert status_of(shared) == "fail"
        shared.push([Outcome("t", "k", "pass", "2026-12-04T10:00:02.000+00:00", None, 1.0)])  # later: it wins
        assert status_of(shared) == "pass"
        # one batch holding both, the older last: the later one still decides
        shared.push([Outcome("u", "k", "fail", T3, None, 1.0), Outcome("u", "k", "pass", T1, None, 1.0)])
        assert status_of(shared, "u") == "fail"
    finally:
        shared.close()


def test_the_outbox_is_emptied_of_every_pushed_outcome(pg, monkeypatch, tmp_path):
    from open_agent_compiler.tasks.shared_session import OUTBOX_COLUMNS, OUTBOX_DDL, SharedSession

    db = tmp_path / "state.sqlite3"
    conn = sqlite3.connect(db)
    conn.execute(OUTBOX_DDL)
    conn.executemany(f"insert into shared_outbox ({OUTBOX_COLUMNS}) values (?, ?, ?, ?, ?, ?, ?, ?)",
                     [(f"t{i}", "k", "pass", T1, None, 1.0, None, None) for i in range(3)])
    conn.commit()
    conn.close()
    monkeypatch.setenv("PGPASSWORD", PASSWORD)
    session = SharedSession(pg.url(pg.database), "demo", db, required=False)
    session.store.connect()
    session.push_outbox()
    left = sqlite3.connect(db).execute("select count(*) from shared_outbox").fetchone()[0]
    session.close()
    assert left == 0 and session.pushed == 3
    shared = store(pg, monkeypatch)
    try:
        assert sorted(shared.fetch(["t0", "t1", "t2"])) == ["t0", "t1", "t2"]
    finally:
        shared.close()


class SilentProxy:
    """127.0.0.1 → the server; once `flag` exists (or `silent` is set), it keeps every connection open, reads what
    the client sends and answers nothing."""

    def __init__(self, port: int, flag: Path) -> None:
        self.upstream, self.flag = port, flag
        self.silent = threading.Event()
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.sockets: list[socket.socket] = [self.listener]
        threading.Thread(target=self._accept, daemon=True).start()

    def quiet(self) -> bool:
        return self.silent.is_set() or self.flag.exists()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            server = socket.create_connection(("127.0.0.1", self.upstream))
            self.sockets += [client, server]
            threading.Thread(target=self._pump, args=(client, server), daemon=True).start()
            threading.Thread(target=self._pump, args=(server, client), daemon=True).start()

    def _pump(self, source: socket.socket, sink: socket.socket) -> None:
        while True:
            try:
                data = source.recv(65536)
            except OSError:
                return
            if not data:
                return
            if not self.quiet():
                try:
                    sink.sendall(data)
                except OSError:
                    return

    def close(self) -> None:
        for sock in self.sockets:
            sock.close()


def test_a_silent_server_is_given_up_and_the_store_call_returns(pg, monkeypatch, tmp_path):
    from open_agent_compiler.tasks.shared_store import Outcome, SharedStateError

    proxy = SilentProxy(pg.port, tmp_path / "never")
    monkeypatch.setenv("OAC_STATE_TIMEOUT_S", "1")
    try:
        shared = store(pg, monkeypatch, f"postgresql://oac_ci@127.0.0.1:{proxy.port}/{pg.database}")
        proxy.silent.set()
        raised: list[BaseException] = []

        def push() -> None:
            try:
                shared.push([Outcome("t", "k", "pass", T1, None, 1.0)])
            except BaseException as exc:  # noqa: BLE001 - looked at below
                raised.append(exc)

        pusher = threading.Thread(target=push, daemon=True)
        pusher.start()
        pusher.join(60)  # a bound on a hang (broken code blocks forever), not a wait for anything to happen
        assert not pusher.is_alive(), "the push hangs on a silent server"
        assert len(raised) == 1 and isinstance(raised[0], SharedStateError), raised
        assert "no answer within 1 s" in str(raised[0])
    finally:
        proxy.close()


def test_oac_test_finishes_when_the_server_goes_silent_mid_run(pg, tmp_path):
    flag = tmp_path / "silent-now"
    proxy = SilentProxy(pg.port, flag)
    try:
        proj = make(tmp_path / "proj")
        env = {**pg.env(pg.database), "OAC_STATE_URL": f"postgresql://oac_ci@127.0.0.1:{proxy.port}/{pg.database}",
               "OAC_STATE_TIMEOUT_S": "2", "STOP_SERVER": f"touch\x1f{flag}"}
        done = proj.test(env=env, timeout=100)  # gamma makes the proxy silent; hanging is a TimeoutExpired
        assert summary_line(done.stdout) == SUMMARY.format(4, 4, 0, 0, 0), done.stdout + done.stderr
        assert "no answer within 2 s" in done.stderr and flag.exists()
    finally:
        proxy.close()


def test_a_multi_host_url_is_used_not_a_traceback(pg, tmp_path):
    proj = make(tmp_path / "proj")
    dead = socket.create_server(("127.0.0.1", 0))  # a port nobody answers on is fine too: libpq tries the next
    dead_port = dead.getsockname()[1]
    dead.close()
    url = f"postgresql://oac_ci@127.0.0.1:{dead_port},127.0.0.1:{pg.port}/{pg.database}"
    env = {**pg.env(pg.database), "OAC_STATE_URL": url}
    done = proj.test(env=env)
    assert summary_line(done.stdout) == SUMMARY.format(4, 4, 0, 0, 0) and "Traceback" not in done.stderr
    status = proj.oac("state", "status", env=env, check_code=0)
    assert f"127.0.0.1:{dead_port},127.0.0.1:{pg.port}" in status.stdout and "4 keys" in status.stdout


def test_prune_with_a_bare_number_means_days(pg, tmp_path):
    import psycopg

    proj = make(tmp_path / "proj")
    env = pg.env(pg.database)
    proj.test(env=env)
    with psycopg.connect(pg.url(pg.database), password=PASSWORD, autocommit=True) as conn:  # 40 s and 31 days old
        conn.execute("update oac_outcomes set recorded_at = now() - interval '40 seconds' where task_id like '%alpha%'")
        conn.execute("update oac_outcomes set recorded_at = now() - interval '31 days' where task_id like '%beta%'")
    done = proj.oac("state", "prune", "--older-than", "30", env=env, check_code=0)
    assert "removed 1 " in done.stdout  # beta only: 30 is 30 days, not 30 seconds


def test_a_pass_another_runner_pushes_while_this_run_plans_is_seen_before_the_tests_run(pg, monkeypatch, tmp_path):
    """The race seen once: the planning read starts while the registry loads; a pass pushed after it and before
    the tests run was missed, and the test ran again as 'never ran'. The plan reads again just before the run."""
    from open_agent_compiler.tasks.shared_session import SharedSession
    from open_agent_compiler.tasks.shared_store import Outcome

    monkeypatch.setenv("PGPASSWORD", PASSWORD)
    session = SharedSession(pg.url(pg.database), "demo", tmp_path / "state.sqlite3", required=False)
    session.start("test:prod:")
    session.open(["test:prod:a", "test:prod:b"])  # the planning read: nothing yet
    other = store(pg, monkeypatch)
    try:
        other.push([Outcome("test:prod:a", "k", "pass", T1, None, 1.0),
                    Outcome("test:prod:zz", "k", "pass", T1, None, 1.0)])  # (not planned here)
    finally:
        other.close()
    assert session.last("test:prod:a", "k") is None
    session.refresh()  # what TestPlan does before adopting shared passes
    try:
        assert session.last("test:prod:a", "k").status == "pass"
        assert "test:prod:zz" not in session.known
    finally:
        session.close()


def test_oac_test_refreshes_the_shared_state_after_planning(pg, tmp_path):
    """End to end: a factory that (as another runner would, during this run's planning) pushes a pass under the
    key the run computes: that test (a capability test: its key covers no discovered file) is skipped, not re-run
    as 'never ran'."""
    env = pg.env(pg.database)
    first = make(tmp_path / "first")
    first.test(env=env)
    import psycopg

    with psycopg.connect(pg.url(pg.database), password=PASSWORD, autocommit=True) as conn:
        rows = conn.execute("select task_id, key, status, finished_at, duration_s from oac_outcomes "
                            "where task_id like '%allowed%'").fetchall()
        conn.execute("delete from oac_outcomes where task_id like '%allowed%'")
    (task_id, key, status, finished, duration), = rows
    second = make(tmp_path / "second")
    # the registry of the second checkout pushes alpha-allowed's pass while it loads (after the planning read started)
    second.write("agents.py", second.root.joinpath("agents.py").read_text().replace(
        "def registry():\n", "def registry():\n    _push_beta()\n", 1) + f'''

def _push_beta():
    import os, psycopg, time
    with psycopg.connect(os.environ["OAC_STATE_URL"], autocommit=True) as conn:
        while not conn.execute("select 1 from pg_stat_activity where application_name = '' and query like "
                               "'%%starts_with%%' and pid <> pg_backend_pid() and state = 'idle'").fetchone():
            time.sleep(0.01)  # until the run's planning read is done (its connection idle after the select)
        conn.execute("insert into oac_outcomes (project, task_id, key, status, finished_at, duration_s) "
                     "values ('demo', %s, %s, %s, %s, %s)", ({task_id!r}, {key!r}, {status!r}, {finished!r}, {duration!r}))
''')
    done = second.test("--explain", env=env)
    assert summary_line(done.stdout) == SUMMARY.format(4, 0, 0, 4, 0), done.stdout + done.stderr
    assert "never ran" not in done.stdout


def test_failing_repeats_record_the_failure_under_the_tests_key_for_every_runner(pg, tmp_path):
    from test_shared_state import outcomes

    env = pg.env(pg.database)
    first = make(tmp_path / "first")
    first.test(env=env)
    first.test("--filter", "beta", "--repeat", "3", env={**env, "BETA_FAIL": "1"}, code=1)
    beta = {key: status for (task, key), status in outcomes(pg).items() if "beta" in task and "@r" not in task}
    assert list(beta.values()) == ["fail"], beta
    # another machine (its local state knows nothing) runs beta instead of skipping the old green
    from shared_project import clone

    second = clone(first, tmp_path / "second")
    done = second.test(env=env)
    assert summary_line(done.stdout) == SUMMARY.format(4, 1, 0, 3, 0), done.stdout + done.stderr
    assert second.executions() == ["beta"]
