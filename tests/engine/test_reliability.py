"""Concurrency, crashes and corrupt state: every run ends with the right code and honest state."""

import json
import os
import shutil
import signal
import sqlite3
import subprocess

import pytest

from open_agent_compiler.keys.record_hash import composite_hash
from engine_project import OAC, ONE_AGENT, READ_BUILD, SUMMARY, Project, add_agent_tests, summary_line

SLOW_TOOLS = '''
from open_agent_compiler import (
    AgentDefinition, AgentHeader, AgentRegistry, CompilationConfig, EqualsEvaluator, MockResponse,
    TemplateSlot, TemplateTree, ToolDefinition, ToolDefinitionHeader, ToolTest,
)


def registry():
    tools = [
        ToolDefinition(
            header=ToolDefinitionHeader(name=f"t{i}", description="slow"),
            mock=MockResponse(kind="callable", callable_spec="slow:answer"),
            tool_tests=[ToolTest(name=f"slow-{i}", input={"i": i}, evaluators=(EqualsEvaluator(field="i", expected=i),))],
        )
        for i in range(COUNT)
    ]
    return one_agent(tools)


COUNT = 40
''' + ONE_AGENT

SLOW = '''
import os, signal, sqlite3, time


def saved_green():
    try:
        db = sqlite3.connect("file:.oac/doit-state.sqlite3?mode=ro", uri=True)
        return db.execute("select count(*) from doit where green_key is not null").fetchone()[0]
    except sqlite3.Error:
        return 0


def answer(payload):
    fifo = os.environ.get("OAC_TEST_FIFO")
    block_at = int(os.environ.get("OAC_TEST_BLOCK_AT", "-1"))
    if fifo and payload["i"] == block_at:
        # hang like a stuck test: no result arrives any more, so only the engine's timer can save the
        # tests before this one; tell the test once it has (or after 30 s: the test then fails)
        deadline = time.monotonic() + 30
        while saved_green() < block_at and time.monotonic() < deadline:
            time.sleep(0.01)
        with open(fifo, "w") as pipe:
            pipe.write("blocked\\n")
        signal.pause()
    return {"i": payload["i"]}
'''


def start_blocked_run(slow: Project, tmp_path, block_at: int, **popen) -> subprocess.Popen:
    """Start `oac test` on the slow project and return once test `block_at` is running (0..block_at-1 done)."""
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    env = {**os.environ, "OAC_TEST_FIFO": str(fifo), "OAC_TEST_BLOCK_AT": str(block_at)}
    env.pop("OAC_HERMETIC", None)
    proc = subprocess.Popen([OAC, "test", "agents:registry", "--config", "prod"], cwd=slow.root, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **popen)
    with open(fifo) as pipe:
        assert pipe.readline() == "blocked\n"
    return proc


@pytest.fixture
def slow(tmp_path) -> Project:
    return Project.of(tmp_path / "slow", {"agents.py": SLOW_TOOLS, "slow.py": SLOW})


def test_eight_concurrent_runs_share_one_project(project: Project) -> None:
    procs = [subprocess.Popen([OAC, "test", "agents:registry", "--config", "prod"], cwd=project.root,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(8)]
    outputs = [p.communicate(timeout=300) for p in procs]
    for proc, (out, err) in zip(procs, outputs):
        assert proc.returncode == 0, out + err
        assert "database is locked" not in err and "Traceback" not in err
        line = summary_line(out)
        assert line.startswith("oac test: discovered=4 ") and "failed=0" in line
    # no torn line: every line parses, and every record is a pass
    raw = (project.root / ".oac/test_results.jsonl").read_text().splitlines()
    records = [json.loads(line) for line in raw]
    assert records and all(r["status"] == "pass" for r in records)
    # state is consistent afterwards: a ninth run skips everything
    done = project.test()
    assert summary_line(done.stdout) == SUMMARY.format(4, 0, 0, 4, 0)


def green_tests(project: Project) -> set[str]:
    """Test ids the state DB holds as green (what the next run would skip)."""
    db = project.root / ".oac" / "doit-state.sqlite3"
    rows = sqlite3.connect(db).execute("select task_id from doit where green_key is not null").fetchall()
    return {name.split(":", 2)[2] for (name,) in rows}


def test_kill_minus_nine_mid_run_loses_nothing_that_finished(slow: Project, tmp_path) -> None:
    proc = start_blocked_run(slow, tmp_path, 10, start_new_session=True)  # 0..9 have finished, 10 hangs
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    finished = {f"tool:t{i}::slow-{i}" for i in range(10)}
    assert {r["test_id"] for r in slow.records()} == finished
    lines = (slow.root / ".oac/test_results.jsonl").read_text().splitlines()
    assert all(json.loads(line) for line in lines)  # no torn line
    # the green state was saved before the hanging test started: every finished test, each with its record
    assert green_tests(slow) == finished
    done = slow.test()
    assert summary_line(done.stdout) == SUMMARY.format(40, 30, 0, 10, 0)
    rerun = {r["test_id"] for r in slow.records()[len(lines):]}
    assert rerun == {f"tool:t{i}::slow-{i}" for i in range(10, 40)}


def test_green_never_exists_without_its_record(slow: Project, tmp_path) -> None:
    """Whatever moment a kill hits, a test the DB holds green has a pass record with the same key."""
    for block_at in (1, 5):
        proc = start_blocked_run(slow, tmp_path, block_at, start_new_session=True)
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        (tmp_path / "fifo").unlink()
        records = {(r["test_id"], r["composite_hash"]) for r in slow.records() if r["status"] == "pass"}
        db = sqlite3.connect(slow.root / ".oac" / "doit-state.sqlite3")
        for name, key in db.execute("select task_id, green_key from doit where green_key is not null"):
            assert (name.split(":", 2)[2], composite_hash(key)) in records


def test_corrupt_state_db_warns_and_runs_cold(project: Project) -> None:
    project.test()
    db = project.root / ".oac" / "doit-state.sqlite3"
    for extra in (".oac/doit-state.sqlite3-wal", ".oac/doit-state.sqlite3-shm"):
        (project.root / extra).unlink(missing_ok=True)
    db.write_bytes(b"this is not a database" * 100)
    done = project.test()
    assert "warning" in done.stderr and "doit-state.sqlite3" in done.stderr
    assert summary_line(done.stdout) == SUMMARY.format(4, 4, 0, 0, 0)
    assert project.test().returncode == 0
    assert sqlite3.connect(db).execute("select count(*) from doit").fetchone()[0] >= 4


def test_corrupt_results_line_is_skipped_by_the_reader(project: Project, capsys) -> None:
    from open_agent_compiler.history.log import read_records
    project.test()
    log = project.root / ".oac/test_results.jsonl"
    with open(log, "a") as handle:
        handle.write('{"torn": \n')
    project.test("--force")
    records = list(read_records(log))
    assert len(records) == 8
    assert ":5: skipping a corrupt line" in capsys.readouterr().err
    assert all(json.loads(line) for i, line in enumerate(log.read_text().splitlines()) if i != 4)


def test_two_processes_give_the_same_results_as_serial(slow: Project) -> None:
    serial = slow.test()
    parallel = slow.test("-n", "2", "--force")
    assert summary_line(serial.stdout) == summary_line(parallel.stdout) == SUMMARY.format(40, 40, 0, 0, 0)
    by_id = {}
    for record in slow.records():
        by_id.setdefault(record["test_id"], []).append((record["status"], record["composite_hash"], record["score"]))
    differ = {test_id: runs for test_id, runs in by_id.items() if len(runs) != 2 or runs[0] != runs[1]}
    assert len(by_id) == 40 and not differ, differ
    again = slow.test("-n", "2")
    assert summary_line(again.stdout) == SUMMARY.format(40, 0, 0, 40, 0)


def test_ctrl_c_exits_130_with_finished_tests_recorded(slow: Project, tmp_path) -> None:
    proc = start_blocked_run(slow, tmp_path, 7)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, out + err
    assert "Traceback" not in err
    assert {r["test_id"] for r in slow.records()} == {f"tool:t{i}::slow-{i}" for i in range(7)}
    # the interrupted run saved its green state: the next run only runs what had not finished
    done = slow.test()
    assert summary_line(done.stdout) == SUMMARY.format(40, 33, 0, 7, 0)


@pytest.mark.parametrize("jobs", ["2", "3"])
def test_parallel_runs_wait_for_the_compile_task_and_report_failures(project: Project, jobs: str) -> None:
    """Agent tests run from the build, so they depend on the compile task; with jobs queued ahead, none may start
    before it ends."""
    add_agent_tests(project)
    serial = project.test(*READ_BUILD, code=0)
    project.edit("handlers/lookup.py", "TRANSFORM = str.upper", "TRANSFORM = str.lower")
    shutil.rmtree(project.root / ".oac" / "build")  # an agent test that ran before compiling would fail
    parallel = project.test(*READ_BUILD, "--force", "-n", jobs, code=1)
    assert summary_line(serial.stdout) == SUMMARY.format(6, 6, 0, 0, 0)
    assert summary_line(parallel.stdout) == SUMMARY.format(6, 5, 1, 0, 0)
    assert "FAIL 'lookup-real'" in parallel.stdout
    rerun = project.records()[6:]
    assert sorted(r["test_id"] for r in rerun) == sorted(r["test_id"] for r in project.records()[:6])
    assert all(r["status"] == "pass" for r in rerun if r["test_kind"] in ("capability", "agent"))
    assert project.test(*READ_BUILD, "-n", jobs, code=1).stdout.count("FAIL") == 1  # only the failed test again


def test_a_run_without_agent_tests_writes_no_build(project: Project) -> None:
    """Capability tests judge the compiled bytes in memory: with no agent test in the run there is no compile
    task and nothing is written to .oac/build, serially or with -n."""
    for jobs in ("1", "2"):
        done = project.test("--force", "-n", jobs, code=0)
        assert summary_line(done.stdout) == SUMMARY.format(4, 4, 0, 0, 0)
        assert not (project.root / ".oac" / "build").exists()
    add_agent_tests(project)
    project.test(*READ_BUILD, code=0)
    assert (project.root / ".oac/build/prod/opencode/.opencode/agents/primary.md").is_file()


def test_an_edited_build_is_restored_before_agent_tests_run_from_it(project: Project) -> None:
    """A harness must run from this run's compiled bytes: a build file edited since the compile task wrote it
    (same size, so only its mtime tells) is rewritten, even when nothing else changed."""
    add_agent_tests(project)
    project.test(*READ_BUILD, code=0)
    agent_file = project.root / ".oac/build/prod/opencode/.opencode/agents/primary.md"
    original = agent_file.read_bytes()
    agent_file.write_bytes(original.replace(b"ALPHA_PROMPT", b"EDITED_TEXT!"))
    green = project.test(*READ_BUILD, code=0)
    assert summary_line(green.stdout) == SUMMARY.format(6, 0, 0, 6, 0)
    assert agent_file.read_bytes() == original
    agent_file.write_bytes(original.replace(b"ALPHA_PROMPT", b"EDITED"))
    forced = project.test(*READ_BUILD, "--force", code=0)  # the agent tests run, from the restored file
    assert summary_line(forced.stdout) == SUMMARY.format(6, 6, 0, 0, 0)
    assert agent_file.read_bytes() == original


def test_a_test_whose_record_cannot_be_written_is_not_green(project: Project, monkeypatch, capsys) -> None:
    """The record is written before doit may save the pass: when writing it fails, nothing turns green."""
    from open_agent_compiler.errors import ResultsError
    from open_agent_compiler.tasks import build_options, graph, reporter, run_tests

    def refuse(plan, record):
        raise ResultsError("cannot write results file: disk full")

    monkeypatch.setattr(graph, "append_record", refuse)
    monkeypatch.setattr(reporter, "append_record", refuse)
    monkeypatch.chdir(project.root)
    with pytest.raises(ResultsError, match="disk full"):  # the run ends at once: one line and exit 2 in the CLI
        run_tests(build_options(project.root, {"factory": "agents:registry", "config": "prod"}))
    db = project.root / ".oac" / "doit-state.sqlite3"
    assert sqlite3.connect(db).execute("select count(*) from doit where green_key is not null").fetchone()[0] == 0
    assert project.records() == []


@pytest.mark.parametrize("where", ["dir", "file-parent"])
def test_an_unusable_results_path_is_exit_2_before_any_test_runs(project: Project, where: str) -> None:
    if where == "dir":
        (project.root / "results.jsonl").mkdir()
        target = "results.jsonl"
    else:
        (project.root / "blocker").write_text("a file, not a directory")
        target = "blocker/results.jsonl"
    done = project.test("--results", target, code=2)
    assert done.stderr.count("\n") == 1 and "results" in done.stderr and "Traceback" not in done.stderr
    assert project.executions() == [] and not (project.root / ".oac" / "doit-state.sqlite3").exists()


SURROGATE = '''
def answer(payload):
    return {"i": payload["i"], "text": "bad \\udc80 byte"}
'''


def test_a_record_with_a_lone_surrogate_is_written_escaped(tmp_path) -> None:
    agents = SLOW_TOOLS.replace("COUNT = 40", "COUNT = 1").replace("slow:answer", "surrogate:answer").replace(
        'EqualsEvaluator(field="i", expected=i)', 'EqualsEvaluator(field="text", expected="other")')
    proj = Project.of(tmp_path / "surrogate", {"agents.py": agents, "surrogate.py": SURROGATE})
    done = proj.test(code=1)
    assert summary_line(done.stdout) == SUMMARY.format(1, 0, 1, 0, 0)
    (record,) = proj.records()
    assert record["status"] == "fail" and "\\udc80" in json.dumps(record)


def test_skipped_and_not_runnable_records_are_not_passed(quickstart: Project) -> None:
    quickstart.test()
    statuses = {r["status"]: r["passed"] for r in quickstart.records()}
    assert statuses == {"pass": True, "not_runnable": False}
    quickstart.edit("agents.py", 'evaluators=(EqualsEvaluator(field="from", expected="tool.mock"),)',
                    'evaluators=(LLMJudgeEvaluator(criteria="x"),)')
    quickstart.edit("agents.py", "JsonPathEvaluator, ", "JsonPathEvaluator, LLMJudgeEvaluator, ")
    quickstart.test()
    skipped = [r for r in quickstart.records() if r["status"] == "skipped"]
    assert skipped and all(r["passed"] is False for r in skipped)


def test_tests_of_a_failed_compile_are_counted_failed(project: Project) -> None:
    """The agent tests need the build and fail naming the compile error; capability tests judge the compiled
    bytes in memory and pass."""
    add_agent_tests(project)
    # a directory where a compiled file goes (a file where the build directory goes is refused before the run)
    blocked = project.root / ".oac" / "build" / "prod" / "opencode" / ".opencode" / "agents" / "primary.md"
    blocked.mkdir(parents=True)
    for jobs in ("1", "2"):
        done = project.test(*READ_BUILD, "-n", jobs, code=1)
        # the second time the tool and capability tests are green (skipped); the agent tests fail again
        assert summary_line(done.stdout) == SUMMARY.format(6, 4 if jobs == "1" else 0, 2, 0 if jobs == "1" else 4, 0)
        assert done.stdout.count("FAIL 'reads-build'") == 2
        assert "ERROR oac_compile:prod:opencode: " in done.stdout and "Traceback" not in done.stdout
        assert str(blocked) in done.stdout
        failed = [r for r in project.records() if r["status"] == "fail"][-2:]
        assert all(r["evidence"][0]["evidence"].startswith("not run: its compile task failed: ")
                   and str(blocked) in r["evidence"][0]["evidence"] for r in failed)
