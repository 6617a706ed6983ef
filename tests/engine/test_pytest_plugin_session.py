"""The pytest plugin scales with the suite: one plan, one doit run and one opening of the state per pytest session
(per xdist worker), each item one step of that run — counted, not timed. Under `-n 2` no test runs twice and no
record is lost, and `oac test` afterwards skips every test pytest proved."""

import json
import subprocess
import sys
from pathlib import Path

from engine_project import REPO, Project, counting_conftest, green_skips, inner_pytest_env, summary_line

sys.path.insert(0, str(REPO / "benchmarks"))
from generate import Spec, generate  # noqa: E402

TESTS = 60
OAC = ("--oac", "agents:registry", "--oac-config", "prod")

# Loaded by pytest in the scratch project (a conftest.py at its root): counts the calls that cost O(suite) each —
# planning, a doit run, opening the state DB — and the per-item steps, one JSON file per process.
COUNTING_CONFTEST = counting_conftest(
    "import doit.doit_cmd\nfrom open_agent_compiler.tasks import backend, graph, stepped",
    ("graph.TestPlan", "__init__", "plans"), ("doit.doit_cmd.DoitMain", "run", "doit_runs"),
    ("backend.OacStateDB", "__init__", "state_opened"), ("stepped.SteppedRun", "step", "steps"),
    ("stepped.SteppedRun", "finish", "finished"))


def suite(root: Path) -> Project:
    generate(root, Spec.for_tests(TESTS, handler_every=0))
    (root / ".git").mkdir()
    proj = Project(root)
    proj.write("conftest.py", COUNTING_CONFTEST)
    return proj


def pytest_run(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:randomly", "-p", "no:cacheprovider",
                           *OAC, *args], cwd=root, capture_output=True, text=True, timeout=600, env=inner_pytest_env())
    assert done.returncode == 0, done.stdout + done.stderr
    return done


def counts(root: Path) -> dict[str, dict[str, int]]:
    found = {path.stem.removeprefix("counts-"): json.loads(path.read_text()) for path in root.glob("counts-*.json")}
    for path in root.glob("counts-*.json"):
        path.unlink()
    return found


def test_one_plan_one_doit_run_one_state_opening_per_session(tmp_path: Path) -> None:
    proj = suite(tmp_path / "suite")
    cold = pytest_run(proj.root)
    assert f"{TESTS} passed" in cold.stdout
    assert counts(proj.root) == {"main": {"plans": 1, "doit_runs": 1, "state_opened": 1, "steps": TESTS,
                                          "finished": 1}}
    warm = pytest_run(proj.root, "-rs")
    assert f"{TESTS} skipped" in warm.stdout and green_skips(warm.stdout) == TESTS
    assert counts(proj.root)["main"] == {"plans": 1, "doit_runs": 1, "state_opened": 1, "steps": TESTS,
                                         "finished": 1}
    # a selection runs only its items, still through one plan and one doit run
    some = pytest_run(proj.root, "-k", "a1-tool or agent-1- or a2-tool or agent-2-")
    assert "skipped" in some.stdout and "deselected" in some.stdout
    assert counts(proj.root)["main"] == {"plans": 1, "doit_runs": 1, "state_opened": 1, "steps": 10, "finished": 1}


def test_under_xdist_each_worker_one_session_no_test_twice_no_record_lost(tmp_path: Path) -> None:
    proj = suite(tmp_path / "suite")
    spread = pytest_run(proj.root, "-n", "2")
    assert f"{TESTS} passed" in spread.stdout
    found = counts(proj.root)
    workers = {who: seen for who, seen in found.items() if who != "main"}
    assert sorted(workers) == ["gw0", "gw1"] and "plans" not in found.get("main", {})  # the controller plans nothing
    for seen in workers.values():
        assert (seen["plans"], seen["doit_runs"], seen["state_opened"], seen["finished"]) == (1, 1, 1, 1)
    assert sum(seen["steps"] for seen in workers.values()) == TESTS  # every item ran once, on one worker
    records = proj.records()
    assert len(records) == TESTS and len({record["test_id"] for record in records}) == TESTS
    # both workers' passes were saved: oac test skips them all
    after = proj.oac("test", "agents:registry", "--config", "prod", check_code=0)
    assert summary_line(after.stdout) == f"oac test: discovered={TESTS} passed=0 failed=0 skipped={TESTS} " \
        "not_runnable=0"
