"""Issue 33, the parts without a server: failing repeats drop the old green (locally), a deeply nested -k/-m is
one line, skipped repeats are not runs, and a Ctrl-C while the state flusher starts leaves nothing to join."""

import threading
from pathlib import Path

import pytest
from engine_project import SUMMARY, Project, summary_line

import sys

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "shared_state"))
from shared_project import make  # noqa: E402


@pytest.mark.parametrize("env", [{"BETA_FAIL": "1"}, {"BETA_FLIP": "1"}], ids=["all-fail", "flaky"])
def test_failing_repeats_remove_the_tests_own_green(tmp_path: Path, env: dict) -> None:
    project = make(tmp_path / "p")
    project.write("mocks.py", project.root.joinpath("mocks.py").read_text().replace(
        '    return {"ok": not os.environ.get("BETA_FAIL")}',
        '    if os.environ.get("BETA_FLIP"):  # fails on every second call: a flaky test\n'
        '        calls = len(open("executions.log").read().split("beta")) - 1\n'
        '        return {"ok": calls % 2 == 1}\n'
        '    return {"ok": not os.environ.get("BETA_FAIL")}'))
    project.test()  # all green
    project.test("--filter", "beta", "--repeat", "3", env=env, code=1)
    # the next plain run (beta healthy again) must run beta, not skip it as green from before the repeats
    before = project.executions().count("beta")
    done = project.test()
    assert summary_line(done.stdout) == SUMMARY.format(4, 1, 0, 3, 0), done.stdout + done.stderr
    assert project.executions().count("beta") == before + 1


@pytest.mark.parametrize("expression", ["not " * 1000 + "x", "(" * 500 + "x" + ")" * 500])
@pytest.mark.parametrize("flag", ["-k", "-m"])
def test_a_deeply_nested_expression_is_one_line_exit_2(quickstart: Project, flag: str, expression: str) -> None:
    done = quickstart.test(flag, expression, code=2)
    assert "Traceback" not in done.stderr and "RecursionError" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and "nested deeper than" in done.stderr


def test_the_deepest_accepted_expression_still_matches() -> None:
    from open_agent_compiler.testing.selection import MAX_DEPTH, keyword_matcher

    assert keyword_matcher("not " * MAX_DEPTH + "x")("x", frozenset()) is (MAX_DEPTH % 2 == 0)
    assert keyword_matcher("(" * MAX_DEPTH + "x" + ")" * MAX_DEPTH)("x", frozenset())


def test_skipped_and_not_runnable_repeats_are_not_runs() -> None:
    from open_agent_compiler.history.log import TestOutcome
    from open_agent_compiler.tasks.repeats import verdict

    runs = [TestOutcome(status="pass", score=1.0), TestOutcome(status="skipped", score=0.0, skip_reason="s"),
            TestOutcome(status="not_runnable", score=0.0, skip_reason="n")]
    outcome, summary, flaky = verdict(runs, "fail")
    assert (outcome.status, flaky, summary["runs"], summary["passes"]) == ("pass", False, 1, 1)


def test_ctrl_c_while_the_flusher_starts_leaves_nothing_to_join(tmp_path: Path, monkeypatch) -> None:
    from open_agent_compiler.tasks.backend import OacStateDB

    backend = OacStateDB(str(tmp_path / "state.sqlite3"))
    real_start = threading.Thread.start

    def interrupted(self):  # the Ctrl-C lands after the Thread object exists, before it runs
        if self.name == "oac-state-flush":
            raise KeyboardInterrupt
        return real_start(self)

    monkeypatch.setattr(threading.Thread, "start", interrupted)
    with pytest.raises(KeyboardInterrupt):
        backend.set("t", "_values_:", {"key": "k", "status": "pass"})
    monkeypatch.setattr(threading.Thread, "start", real_start)
    backend.dump()  # no "cannot join thread before it is started": the run can exit 130
    assert OacStateDB(str(tmp_path / "state.sqlite3")).get("t", "_values_:")["key"] == "k"
