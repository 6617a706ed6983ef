"""The race of issue 33 ("re-ran two tool tests as `never ran` although the database held a pass under the
identical key, recorded seconds earlier by another runner"), generated.

A tool test's key covers the project files its mock loaded (discovered imports). The plan keys it over the files
its local state remembers, else those of the newest shared pass in the planning read — and both can be stale: a
checkout that last ran an older version of the code, or a pass another runner pushed after the planning read.
Hypothesis draws the orders of local writes (earlier runs in this checkout, under version A or B of the mock's
module, passing or failing) and shared writes (another runner's outcomes under either version, pushed before the
planning read or between it and the read just before the run), then runs `oac test` (in process, against a store
that answers each read with what was pushed by then). Oracle: the test is skipped iff the last run under the key
it records passed — in the shared state if it holds that key, else locally; so a pass in the shared store under
the identical key is never re-run (as 'never ran' or otherwise), and nothing else is skipped."""

import io
import shutil
import sqlite3
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from engine_project import Project

AGENTS = '''
from open_agent_compiler import (
    AgentDefinition, AgentHeader, AgentRegistry, BashToolPermission, CompilationConfig, EqualsEvaluator,
    MockResponse, TemplateSlot, TemplateTree, ToolDefinition, ToolDefinitionHeader, ToolDefinitionLogicBash, ToolTest,
)


def registry():
    tool = ToolDefinition(
        header=ToolDefinitionHeader(name="t", description="t tool"),
        bash_tool=ToolDefinitionLogicBash(permission_bash=BashToolPermission(value="allow", allowed_commands=["t *"])),
        mock=MockResponse(kind="callable", callable_spec="mocks:t"),
        tool_tests=[ToolTest(name="t-ok", input={}, evaluators=(EqualsEvaluator(field="ok", expected=True),))],
    )
    agent = AgentDefinition(header=AgentHeader(agent_id="a", name="a", description="d"), extra_tools=[tool])
    reg = AgentRegistry()
    reg.register_agent("a", agent)
    reg.register_template(TemplateTree(name="tpl", slots=[TemplateSlot(name="primary", default_agent_id="a")]))
    reg.create_compilation_config(CompilationConfig(name="prod", template_name="tpl"))
    return reg
'''
MOCKS = '''
import os

import {helper} as helper


def t(payload):
    with open("executions.log", "a") as log:
        log.write("t\\n")
    return {{"ok": helper.OK and not os.environ.get("T_FAIL")}}
'''
PYPROJECT = '[project]\nname = "race"\nversion = "0"\n\n[tool.oac]\nfactory = "agents:registry"\nconfig = "prod"\n'
VERSIONS = {"A": "helper_a", "B": "helper_b"}  # the mock's module imports one helper or the other
CURRENT = "B"


def checkout(root: Path, version: str) -> Project:
    shutil.rmtree(root, ignore_errors=True)
    return Project.of(root, {"agents.py": AGENTS, "mocks.py": MOCKS.format(helper=VERSIONS[version]),
                             "helper_a.py": "OK = True\n", "helper_b.py": "OK = True\n", "pyproject.toml": PYPROJECT})


def set_version(project: Project, version: str) -> None:
    project.write("mocks.py", MOCKS.format(helper=VERSIONS[version]))


def run(project: Project, monkeypatch, *, fail: bool = False, state: str | None = None, force: bool = False) -> str:
    from open_agent_compiler.tasks import build_options, run_tests

    monkeypatch.chdir(project.root)
    monkeypatch.delenv("OAC_HERMETIC", raising=False)
    monkeypatch.delenv("OAC_STATE_URL", raising=False)
    if fail:
        monkeypatch.setenv("T_FAIL", "1")
    else:
        monkeypatch.delenv("T_FAIL", raising=False)
    out = io.StringIO()
    run_tests(build_options(project.root, {"factory": "agents:registry", "config": "prod", "state": state,
                                           "force": force or None}), out)
    return out.getvalue()


def local_green(project: Project) -> tuple[str, str, list[str]]:
    """(task, green key, imports as saved) of the test's local row."""
    import json

    conn = sqlite3.connect(project.root / ".oac" / "doit-state.sqlite3")
    try:
        (task, key, imports), = conn.execute("select task_id, green_key, imports from doit "
                                             "where task_id like 'test:%' and green_key is not null").fetchall()
    finally:
        conn.close()
    return task, key, json.loads(imports)


class Store:
    """A shared store that answers the planning read with the outcomes pushed before it, and the read just before
    the run with every outcome pushed by then (what another runner pushed in between included)."""

    before: list = []
    during: list = []

    def __init__(self, url: str, project: str) -> None:
        self.where = "postgresql://(in this test)"
        self.project = project
        self._conn: object | None = object()

    def connect(self) -> "Store":
        return self

    def close(self) -> None:
        pass

    def push(self, outcomes: list) -> None:
        pass

    @staticmethod
    def _rows(outcomes: list) -> dict:
        from open_agent_compiler.tasks.shared_store import Known

        found: dict = {}
        for index, outcome in enumerate(outcomes):  # in push order; as the server: the last *finished* one wins
            known = found.setdefault(outcome.task_id, {}).get(outcome.key)
            if known is None or outcome.finished_at > known.finished_at:
                found[outcome.task_id][outcome.key] = Known(outcome.status, outcome.finished_at, outcome.imports,
                                                            1_000.0 + index)
        return found

    def fetch_under(self, prefix: str) -> dict:
        return self._rows(Store.before)

    def fetch_since(self, prefix: str, since: float) -> dict:
        return self._rows(Store.before + Store.during)


LOCAL = st.lists(st.tuples(st.sampled_from("AB"), st.booleans()), max_size=2)  # (version, passed)
SHARED = st.lists(st.tuples(st.sampled_from("AB"), st.sampled_from(["pass", "fail"]),
                            st.sampled_from(["before", "during"])), max_size=4)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(local=LOCAL, shared=SHARED)
@example(local=[], shared=[("B", "pass", "during")])  # the report: no local row, a pass pushed while this run planned
@example(local=[("A", True)], shared=[("B", "pass", "before")])  # local state remembers the imports of older code
@example(local=[("A", True), ("B", True)], shared=[])  # found by this test: the planned key's files stayed file_dep
def test_a_shared_pass_under_the_identical_key_is_never_run_again(tmp_path_factory, monkeypatch, local, shared):
    from open_agent_compiler.tasks import shared_session
    from open_agent_compiler.tasks.shared_store import Outcome

    base = tmp_path_factory.getbasetemp() / "race"
    root = base / "checkout"
    keys = getattr(test_a_shared_pass_under_the_identical_key_is_never_run_again, "keys", None)
    if keys is None:  # each version's key and imports, as a clean local run at this same path records them
        keys = {}
        for version in VERSIONS:
            project = checkout(root, version)
            run(project, monkeypatch)
            keys[version] = local_green(project)
        assert keys["A"][1] != keys["B"][1] and keys["A"][2] != keys["B"][2], keys
        test_a_shared_pass_under_the_identical_key_is_never_run_again.keys = keys
    task = keys[CURRENT][0]

    project = checkout(root, CURRENT)
    for version, passed in local:  # this checkout's earlier runs (forced: each one's outcome is its last run's)
        set_version(project, version)
        run(project, monkeypatch, fail=not passed, force=True)
    set_version(project, CURRENT)
    outcomes = [(when, Outcome(task, keys[version][1], status, f"2026-12-04T10:00:{index:02d}.000+00:00",
                               tuple(keys[version][2]), 0.1)) for index, (version, status, when) in enumerate(shared)]
    monkeypatch.setattr(Store, "before", [o for when, o in outcomes if when == "before"])
    monkeypatch.setattr(Store, "during", [o for when, o in outcomes if when == "during"])
    monkeypatch.setattr(shared_session, "SharedStore", Store)
    before = project.executions()
    out = run(project, monkeypatch, state="postgresql://oac@127.0.0.1:9/oac")
    ran = len(project.executions()) > len(before)

    last_shared = {o.key: o.status for _, o in outcomes}  # the last to finish under each key, anywhere
    current_key = keys[CURRENT][1]
    if current_key in last_shared:
        green = last_shared[current_key] == "pass"
    else:
        green = bool(local) and local[-1] == (CURRENT, True)
    assert ran is not green, (local, shared, out)


def test_a_checkout_whose_local_state_remembers_older_imports_skips_what_another_runner_proved(pg, tmp_path):
    """The same on a real PostgreSQL, with two real checkouts: the second one last saw version A of the mocks'
    module (local state: its imports), the first proves version B; the second, switched to B, runs nothing."""
    from engine_project import SUMMARY, summary_line
    from shared_project import clone, make

    env = pg.env(pg.database)
    first = make(tmp_path / "first")
    first.write("helper2.py", "OK = True\n")
    first.test(env=env)
    second = clone(first, tmp_path / "second")
    second.test(env=env)  # adopts the passes: its local rows remember helper.py as the mocks' import
    for checkout in (first, second):
        checkout.edit("mocks.py", "import helper\n", "import helper2 as helper\n")
    first.test(env=env)  # proves version B: its passes load helper2.py
    done = second.test("--explain", env=env)
    assert summary_line(done.stdout) == SUMMARY.format(4, 0, 0, 4, 0), done.stdout + done.stderr
    assert second.executions() == []
