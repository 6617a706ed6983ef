"""Green state shared between machines on a real PostgreSQL server (tasks.shared_store / shared_session)."""

import json
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from engine_project import SUMMARY, summary_line
from pg_server import PASSWORD
from shared_project import PYPROJECT, clone, make


def outcomes(pg, project: str = "demo") -> dict[tuple[str, str], str]:
    """(task, key) → status, straight from the database."""
    import psycopg

    with psycopg.connect(pg.url(pg.database), password=PASSWORD) as conn:
        rows = conn.execute("select task_id, key, status from oac_outcomes where project = %s", (project,)).fetchall()
    return {(task, key): status for task, key, status in rows}


def ran(project) -> list[str]:
    return sorted(project.executions())


def test_a_second_checkout_skips_what_the_first_proved_and_reruns_what_it_changed(pg, tmp_path):
    env = pg.env(pg.database)
    first = make(tmp_path / "first")
    assert summary_line(first.test(env=env).stdout) == SUMMARY.format(4, 4, 0, 0, 0)
    assert len(outcomes(pg)) == 4 and set(outcomes(pg).values()) == {"pass"}

    second = clone(first, tmp_path / "second")
    done = second.test(env=env)
    assert summary_line(done.stdout) == SUMMARY.format(4, 0, 0, 4, 0), done.stdout + done.stderr
    assert ran(second) == []  # nothing executed: every key was proved on the first machine
    again = second.test(env=env)  # adopted into local state: green here too
    assert summary_line(again.stdout) == SUMMARY.format(4, 0, 0, 4, 0)

    # gamma.txt is a file gamma's mock read: it travelled with gamma's key, so an edit here re-runs gamma alone
    second.write("gamma.txt", "v2\n")
    done = second.test(env=env)
    assert summary_line(done.stdout) == SUMMARY.format(4, 1, 0, 3, 0), done.stdout
    assert ran(second) == ["gamma"]

    # helper.py is a discovered import of the mocks' module: the shared passes carried it, so an edit is seen
    second.write("helper.py", "OK = True  # edited\n")
    done = second.test(env=env)
    assert summary_line(done.stdout) == SUMMARY.format(4, 3, 0, 1, 0), done.stdout
    assert ran(second) == ["alpha", "beta", "gamma", "gamma"]


def test_a_failure_under_a_key_cancels_its_pass_on_every_machine(pg, tmp_path):
    env = pg.env(pg.database)
    first = make(tmp_path / "first")
    first.test(env=env)
    second = clone(first, tmp_path / "second")
    done = second.test("--filter", "beta", "--force", env={**env, "BETA_FAIL": "1"}, code=1)
    assert "FAIL 'beta-ok'" in done.stdout
    assert sorted(status for (task, _), status in outcomes(pg).items() if "beta" in task) == ["fail"]

    # the first machine's local state still says green under that key: the shared failure wins
    done = first.test(env=env)
    assert summary_line(done.stdout) == SUMMARY.format(4, 1, 0, 3, 0), done.stdout
    assert ran(first) == ["alpha", "beta", "beta", "gamma"]
    assert sorted(status for (task, _), status in outcomes(pg).items() if "beta" in task) == ["pass"]


def test_two_branches_alternating_keys_keep_both_green(pg, tmp_path):
    env = pg.env(pg.database)
    work = make(tmp_path / "work")
    work.test(env=env)
    work.write("helper.py", "OK = True  # branch b\n")
    assert summary_line(work.test(env=env).stdout) == SUMMARY.format(4, 3, 0, 1, 0)
    for helper in ("OK = True\n", "OK = True  # branch b\n", "OK = True\n"):  # checkouts back and forth
        work.write("helper.py", helper)
        assert summary_line(work.test(env=env).stdout) == SUMMARY.format(4, 0, 0, 4, 0)
    assert ran(work) == sorted(["alpha", "beta", "gamma"] * 2)
    assert len([k for k in outcomes(pg) if "alpha-ok" in k[0]]) == 2  # one outcome per key


def test_eight_concurrent_runners_lose_no_result_and_never_skip_a_failed_key(pg, tmp_path):
    env = pg.env(pg.database)
    origin = make(tmp_path / "origin")
    runners = [clone(origin, tmp_path / f"runner{i}") for i in range(8)]

    def run(index: int):
        extra = {"BETA_FAIL": "1"} if index % 2 else {}
        return runners[index].test("--force", env={**env, **extra}, code=None, timeout=300)

    with ThreadPoolExecutor(8) as pool:
        results = list(pool.map(run, range(8)))
    for index, done in enumerate(results):
        assert done.returncode == (1 if index % 2 else 0), done.stdout + done.stderr
        assert "shared state" not in done.stderr, done.stderr  # no runner lost the server
    found = outcomes(pg)
    assert len(found) == 4, sorted(found)  # one row per (test, key): every runner wrote the same four keys
    beta_status = next(status for (task, _), status in found.items() if "beta" in task)
    others = {status for (task, _), status in found.items() if "beta" not in task}
    assert others == {"pass"}

    # a ninth machine: it runs beta exactly when the last run under beta's key failed, and skips the rest
    ninth = clone(origin, tmp_path / "ninth")
    done = ninth.test(env=env)
    assert ran(ninth) == (["beta"] if beta_status == "fail" else [])


def test_the_server_stopped_mid_run_the_run_finishes_locally_and_the_next_run_pushes(pg, tmp_path):
    env = pg.env(pg.database)
    first = make(tmp_path / "first")
    stop = "\x1f".join(pg.stop_command())
    done = first.test(env={**env, "STOP_SERVER": stop})
    pg.running = False
    assert summary_line(done.stdout) == SUMMARY.format(4, 4, 0, 0, 0), done.stdout + done.stderr
    warnings = [line for line in done.stderr.splitlines() if "shared state" in line]
    assert len(warnings) == 1 and "going on with local state" in warnings[0], done.stderr

    pg.start()
    assert len(outcomes(pg)) < 4  # what finished after the stop is only in the local outbox
    done = first.test(env=env)  # pushes the outbox first
    assert summary_line(done.stdout) == SUMMARY.format(4, 0, 0, 4, 0), done.stdout + done.stderr
    assert len(outcomes(pg)) == 4 and set(outcomes(pg).values()) == {"pass"}
    fresh = clone(first, tmp_path / "fresh")
    assert summary_line(fresh.test(env=env).stdout) == SUMMARY.format(4, 0, 0, 4, 0)
    assert ran(fresh) == []


def test_an_unreachable_server_is_one_line_and_require_shared_state_exits_2(pg, tmp_path):
    proj = make(tmp_path / "proj")
    env = {**pg.env(pg.database), "PGPASSWORD": "wrong-" + PASSWORD}
    done = proj.test(env=env)
    assert summary_line(done.stdout) == SUMMARY.format(4, 4, 0, 0, 0)
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "password authentication failed" in lines[0], done.stderr
    strict = proj.test("--require-shared-state", env=env, code=2)
    assert strict.stdout == "" and len(strict.stderr.strip().splitlines()) == 1
    for output in (done.stdout, done.stderr, strict.stderr):
        assert PASSWORD not in output
    for path in (tmp_path / "proj").rglob("*"):
        if path.is_file():
            assert PASSWORD.encode() not in path.read_bytes(), path


def test_a_password_in_the_url_is_refused_without_printing_it(tmp_path):
    proj = make(tmp_path / "proj")
    done = proj.test(env={"OAC_STATE_URL": "postgresql://u:hunter2-pw@127.0.0.1:1/x"}, code=2)
    assert "holds a password" in done.stderr and "hunter2-pw" not in done.stderr + done.stdout
    assert not (tmp_path / "proj" / ".oac").exists()


def test_hostile_project_names_and_test_ids_reach_sql_only_as_parameters(pg, tmp_path):
    hostile = "x'); drop table oac_outcomes; --"
    proj = make(tmp_path / "proj", name="demo")
    proj.write("pyproject.toml", (tmp_path / "proj" / "pyproject.toml").read_text()
               + f'project = "{hostile}"\n')
    proj.edit("agents.py", 'name=f"{name}-ok"', 'name=f"{name}-ok\'; delete from oac_outcomes; --"')
    env = pg.env(pg.database)
    assert summary_line(proj.test(env=env).stdout) == SUMMARY.format(4, 4, 0, 0, 0)
    found = outcomes(pg, hostile)  # the table survived, the rows sit under the hostile name verbatim
    assert len(found) == 4 and any("delete_from_oac_outcomes" in task for task, _ in found)
    assert summary_line(proj.test(env=env).stdout) == SUMMARY.format(4, 0, 0, 4, 0)


def test_state_status_and_prune(pg, tmp_path):
    env = pg.env(pg.database)
    proj = make(tmp_path / "proj")
    proj.test(env=env)
    status = json.loads(proj.oac("state", "status", "--format", "json", env=env, check_code=0).stdout)
    assert status["shared"]["keys"] == 4 and status["shared"]["project"] == "demo"
    assert status["shared"]["where"] == pg.url(pg.database) and status["local"]["green"] == 4
    text = proj.oac("state", "status", env=env, check_code=0).stdout
    assert "4 keys of 4 tests" in text and PASSWORD not in text
    assert "removed 0 " in proj.oac("state", "prune", "--older-than", "30d", env=env, check_code=0).stdout
    assert "removed 4 " in proj.oac("state", "prune", "--older-than", "0s", env=env, check_code=0).stdout
    assert outcomes(pg) == {}
    bad = proj.oac("state", "prune", "--older-than", "soon", env=env, check_code=2)
    assert "--older-than 'soon'" in bad.stderr


def test_doit_test_uses_the_shared_state_too(pg, tmp_path):
    env = pg.env(pg.database)
    first = make(tmp_path / "first")
    first.test(env=env)
    second = clone(first, tmp_path / "second")
    import os

    doit = str(Path(sys.executable).with_name("doit"))
    done = subprocess.run([doit, "test"], cwd=second.root, capture_output=True, text=True, timeout=120,
                          env={**os.environ, **env})
    assert summary_line(done.stdout) == SUMMARY.format(4, 0, 0, 4, 0), done.stdout + done.stderr
    assert ran(second) == []


def test_the_schema_is_versioned_and_a_newer_one_is_refused(pg, tmp_path):
    import psycopg

    env = pg.env(pg.database)
    proj = make(tmp_path / "proj")
    proj.test(env=env)
    with psycopg.connect(pg.url(pg.database), password=PASSWORD, autocommit=True) as conn:
        assert conn.execute("select max(version) from oac_schema").fetchone()[0] == 3
        conn.execute("insert into oac_schema (version) values (99)")
    done = proj.test("--require-shared-state", env=env, code=2)
    assert "schema version 99 is newer" in done.stderr


def test_a_least_privilege_role_uses_a_schema_made_by_another(pg, tmp_path):
    env = pg.env(pg.database)
    proj = make(tmp_path / "proj")
    proj.test(env=env)  # the owner's first run creates the schema
    with pg.admin() as conn:
        conn.execute("drop role if exists oac_runner")
        conn.execute("create role oac_runner login password 'runner-pw'")
    import psycopg

    with psycopg.connect(pg.url(pg.database), password=PASSWORD, autocommit=True) as conn:
        conn.execute("grant select, insert, update, delete on oac_outcomes to oac_runner")
        conn.execute("grant select on oac_schema to oac_runner")
    runner = clone(proj, tmp_path / "runner")
    runner_env = {**env, "OAC_STATE_URL": pg.url(pg.database, user="oac_runner"), "PGPASSWORD": "runner-pw"}
    done = runner.test("--require-shared-state", env=runner_env)
    assert summary_line(done.stdout) == SUMMARY.format(4, 0, 0, 4, 0), done.stdout + done.stderr
    runner.write("helper.py", "OK = True  # changed\n")
    done = runner.test("--require-shared-state", env=runner_env)
    assert summary_line(done.stdout) == SUMMARY.format(4, 3, 0, 1, 0), done.stdout + done.stderr
    assert len(outcomes(pg)) == 7


@pytest.mark.parametrize("url", ["postgresql://u:pw@127.0.0.1/x", "postgresql://u@127.0.0.1/x?password=pw",
                                 "postgresql://127.0.0.1/x?sslmode=require&PASSWORD=pw"])
def test_a_password_anywhere_in_the_url_is_refused(url):
    from open_agent_compiler.tasks.shared_store import SharedStateError, check_url

    with pytest.raises(SharedStateError, match="holds a password") as raised:
        check_url(url)
    assert "pw" not in str(raised.value).replace("password", "")
    assert check_url("postgresql://u@127.0.0.1/x?sslmode=require") == "postgresql://u@127.0.0.1/x?sslmode=require"


def test_the_imports_of_the_most_recent_shared_pass_travel_with_the_key(tmp_path):
    from open_agent_compiler.tasks.shared_session import SharedSession
    from open_agent_compiler.tasks.shared_store import Known

    session = SharedSession("postgresql://u@127.0.0.1:1/x", "p", tmp_path / "state.db", required=False)
    session.known = {"t": {"old": Known("pass", "a", ("old.py",), 1.0), "new": Known("pass", "b", ("new.py",), 2.0),
                           "failed": Known("fail", "c", ("failed.py",), 3.0)}}
    assert session.imports_of("t") == ["new.py"]
    assert session.imports_of("other") is None
    # a most recent pass that loaded no project file: nothing travels, as locally (the test is not pinned to be
    # keyed afresh every run, which cost every shared warm run a full keying of 5,000 tests)
    session.known["t"]["newest"] = Known("pass", "d", None, 4.0)
    assert session.imports_of("t") is None


def test_the_fetch_returns_exactly_the_planned_tasks_and_a_failure_under_a_key_wins(pg, monkeypatch):
    """One round trip selects by the planned tasks' common prefix: tasks sharing it (one whose name extends a
    planned one, another config, LIKE wildcards in names) never leak in, and the last outcome under a key decides."""
    from open_agent_compiler.tasks.shared_store import Outcome, SharedStore

    monkeypatch.setenv("PGPASSWORD", PASSWORD)
    store = SharedStore(pg.url(pg.database), "demo").connect()
    try:
        def outcome(task: str, key: str, status: str) -> Outcome:
            return Outcome(task, key, status, "2026-01-01T00:00:00", None, 0.1)

        store.push([outcome("test:prod:a", "k1", "pass"), outcome("test:prod:a", "k0", "pass"),
                    outcome("test:prod:ab", "k1", "pass"), outcome("test:prod:%_", "k1", "pass"),
                    outcome("test:dev:a", "k1", "pass"), outcome("test:prod:b", "k2", "pass")])
        store.push([outcome("test:prod:a", "k1", "fail")])  # another runner's failure under the same key
        found = store.fetch(["test:prod:a"])
        assert set(found) == {"test:prod:a"}
        assert {key: known.status for key, known in found["test:prod:a"].items()} == {"k1": "fail", "k0": "pass"}
        assert set(store.fetch(["test:prod:a", "test:prod:b", "test:prod:%_"])) == {
            "test:prod:a", "test:prod:b", "test:prod:%_"}
        assert store.fetch(["test:prod:%"]) == {} and store.fetch([]) == {}
        assert SharedStore(pg.url(pg.database), "other").connect().fetch(["test:prod:a"]) == {}
    finally:
        store.close()


def test_a_fresh_checkout_takes_keys_from_the_shared_rows_of_its_scope_only(pg, tmp_path):
    """A key pushed with its key-cache scope (a test whose key covers no files) is the key of that test wherever
    the scope is the same, so a fresh checkout reads it instead of keying; a changed definition is another scope
    (keyed here, run); a failure under the scoped key still runs the test."""
    import psycopg

    env = pg.env(pg.database)
    first = make(tmp_path / "first")
    first.test(env=env)
    with psycopg.connect(pg.url(pg.database), password=PASSWORD, autocommit=True) as conn:
        scoped = conn.execute("select task_id, scope is not null from oac_outcomes").fetchall()
        assert sorted(scoped) == [("test:prod:capability:primary::alpha-allowed", True),
                                  ("test:prod:tool:alpha::alpha-ok", False), ("test:prod:tool:beta::beta-ok", False),
                                  ("test:prod:tool:gamma::gamma-ok", False)]  # tool tests' keys cover mocks.py
        # the key as another machine would hold it: the fresh checkout can only find this row through its scope
        conn.execute("update oac_outcomes set key = 'key-from-the-scope' where task_id like '%alpha-allowed'")

    second = clone(first, tmp_path / "second")
    done = second.test(env=env)
    assert summary_line(done.stdout) == SUMMARY.format(4, 0, 0, 4, 0), done.stdout + done.stderr

    third = clone(first, tmp_path / "third")  # another definition of the agent: another scope, keyed here
    third.edit("agents.py", 'description="d"', 'description="d, changed"')
    done = third.test(env=env)
    assert summary_line(done.stdout) == SUMMARY.format(4, 1, 0, 3, 0), done.stdout + done.stderr
    assert "pass 'alpha-allowed'" in done.stdout

    with psycopg.connect(pg.url(pg.database), password=PASSWORD, autocommit=True) as conn:
        conn.execute("update oac_outcomes set status = 'fail' where key = 'key-from-the-scope'")
    done = clone(first, tmp_path / "fourth").test(env=env)
    assert summary_line(done.stdout) == SUMMARY.format(4, 1, 0, 3, 0), done.stdout + done.stderr


def test_two_keys_under_one_scope_give_none(tmp_path):
    from open_agent_compiler.tasks.shared_session import SharedSession
    from open_agent_compiler.tasks.shared_store import Known

    session = SharedSession("postgresql://u@127.0.0.1:1/x", "p", tmp_path / "state.db", required=False)
    session.known = {"n1": {"k1": Known("pass", "a", None, 1.0, "s1"), "k2": Known("fail", "a", None, 2.0, "s2"),
                            "k3": Known("pass", "a", None, 3.0, None)},
                     "n2": {"k4": Known("pass", "a", None, 1.0, "s1"), "k5": Known("pass", "a", None, 2.0, "s1")}}
    assert session.scoped_keys({"t1": "n1", "t2": "n2", "t3": "n3"}) == {"s1": {"t1": "k1"}, "s2": {"t1": "k2"}}


def test_a_version_1_database_is_migrated_and_its_passes_still_count(pg, tmp_path, monkeypatch):
    import psycopg

    from open_agent_compiler.tasks.shared_store import MIGRATIONS, SharedStore

    with psycopg.connect(pg.url(pg.database), password=PASSWORD, autocommit=True) as conn:  # as oac 1 left it
        conn.execute("create table oac_schema (version integer not null)")
        for statement in MIGRATIONS[1]:
            conn.execute(statement)
        conn.execute("insert into oac_schema (version) values (1)")
        conn.execute("insert into oac_outcomes (project, task_id, key, status) values ('demo', 't', 'k', 'pass')")
    monkeypatch.setenv("PGPASSWORD", PASSWORD)
    store = SharedStore(pg.url(pg.database), "demo").connect()
    try:
        assert store.status()["schema_version"] == 3
        assert store.fetch(["t"])["t"]["k"].status == "pass" and store.fetch(["t"])["t"]["k"].scope is None
    finally:
        store.close()


def test_a_session_started_under_another_prefix_still_reads_every_planned_task(pg, tmp_path, monkeypatch):
    """The background read selects by the config's name prefix; a planned task outside it (never expected) is read
    again exactly, so a failure under its key is never missed."""
    from open_agent_compiler.tasks.shared_session import SharedSession
    from open_agent_compiler.tasks.shared_store import Outcome, SharedStore

    monkeypatch.setenv("PGPASSWORD", PASSWORD)
    store = SharedStore(pg.url(pg.database), "demo").connect()
    store.push([Outcome("test:prod:a", "k", "fail", "t", None, None), Outcome("test:dev:a", "k", "pass", "t", None, None)])
    store.close()
    for prefix in ("test:dev:", "test:prod:"):
        session = SharedSession(pg.url(pg.database), "demo", tmp_path / "state.db", required=True).start(prefix)
        try:
            session.open(["test:prod:a"])
            assert session.known == {"test:prod:a": {"k": session.known["test:prod:a"]["k"]}}
            assert session.last("test:prod:a", "k").status == "fail"
        finally:
            session.close()


INLINE_AGENTS = '''
from open_agent_compiler import (
    AgentDefinition, AgentHeader, AgentRegistry, CompilationConfig, EqualsEvaluator, JsonToolPermission,
    ScriptDefinition, TemplateSlot, TemplateTree, ToolDefinition, ToolDefinitionHeader, ToolDefinitionLogicJson,
    ToolScriptDefinition, ToolTest,
)

SCRIPT = """
from pydantic import BaseModel
from open_agent_compiler import ScriptTool


class In(BaseModel):
    pass


class Out(BaseModel):
    ok: bool


class Reader(ScriptTool[In, Out]):
    name = "reader"

    def execute(self, input):
        with open("executions.log", "a") as log:
            log.write("reader\\\\n")
        READ
        return Out(ok=True)
"""
READ = "open('data.txt').read()"  # the handler's read of a project file: discovered, no file known up front


def registry():
    script = ScriptDefinition(target_file_path="tools/reader.py", script_contents=SCRIPT.replace("READ", READ))
    reader = ToolDefinition(
        header=ToolDefinitionHeader(name="reader", description="reads data.txt"),
        json_tool=ToolDefinitionLogicJson(permission_json=JsonToolPermission(allowed_commands=["python tools/reader.py"]),
                                          tool_scripts=[ToolScriptDefinition(scripts=[script])]),
        tool_tests=[ToolTest(name="reader-ok", input={}, evaluators=(EqualsEvaluator(field="ok", expected=True),))],
    )
    agent = AgentDefinition(header=AgentHeader(agent_id="a", name="a", description="d"), extra_tools=[reader])
    reg = AgentRegistry()
    reg.register_agent("a", agent)
    reg.register_template(TemplateTree(name="tpl", slots=[TemplateSlot(name="primary", default_agent_id="a")]))
    reg.create_compilation_config(CompilationConfig(name="prod", template_name="tpl"))
    return reg
'''


def test_a_key_that_covers_discovered_files_is_never_taken_from_its_scope(pg, tmp_path):
    """A handler whose script is inline (no file known up front) reads data.txt: its key covers that file only
    once the run discovered the read, so the pass is keyed over data.txt and must not be pushed with its scope.
    If it were, a fresh checkout whose data.txt differs would take that key from the scope's row and skip the
    test without ever reading its data.txt: the shared imports that pin such a test to be keyed afresh come from
    the test's most recent pass under ANY key, here another branch's, where the handler reads nothing."""
    from engine_project import Project

    env = pg.env(pg.database)
    files = {"agents.py": INLINE_AGENTS, "data.txt": "v1\n", "pyproject.toml": PYPROJECT.format(name="demo")}
    branch_x = Project.of(tmp_path / "x", files)
    done = branch_x.test(env=env)
    assert summary_line(done.stdout) == SUMMARY.format(1, 1, 0, 0, 0), done.stdout + done.stderr

    branch_y = Project.of(tmp_path / "y", {**files, "agents.py": INLINE_AGENTS.replace(
        'READ = "open(\'data.txt\').read()"', 'READ = "pass"')})  # another branch: the handler reads nothing
    done = branch_y.test(env=env)
    assert summary_line(done.stdout) == SUMMARY.format(1, 1, 0, 0, 0), done.stdout + done.stderr

    fresh = clone(branch_x, tmp_path / "fresh")  # branch x again on a fresh machine, with another data.txt
    fresh.write("data.txt", "v2\n")
    done = fresh.test(env=env)
    assert summary_line(done.stdout) == SUMMARY.format(1, 1, 0, 0, 0), done.stdout + done.stderr
    assert ran(fresh) == ["reader"]
    same = clone(branch_x, tmp_path / "same")  # data.txt as branch x proved it: keyed over it, green
    done = same.test(env=env)
    assert summary_line(done.stdout) == SUMMARY.format(1, 0, 0, 1, 0), done.stdout + done.stderr
    assert ran(same) == []
