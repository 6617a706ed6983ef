"""The prefetching process runner behind `oac test -n N`: jobs queued ahead never jump a dependency, every
task runs exactly once, failures are reported, and doit's own runner is back in place afterwards."""

import json
import time
from pathlib import Path

import doit.cmd_run
import pytest
from doit.cmd_base import ModuleTaskLoader
from doit.dependency import Dependency, SqliteDB
from doit.doit_cmd import DoitMain
from doit.runner import MRunner

from open_agent_compiler.tasks.parallel import PrefetchingRunner, prefetching_runner


def _work(seconds: float) -> None:
    """CPU work (not a sleep): the dependency is simply long, so a dependent started early would see it unfinished."""
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        pass


def _tasks(root: Path, fail: str | None = None) -> dict:
    def log(name: str) -> None:
        with open(root / "ran.log", "a") as handle:
            handle.write(name + "\n")

    def slow_build() -> None:
        _work(0.3)
        (root / "built").write_text("yes")
        log("build")

    def needs_build(name: str) -> bool:
        log(name)
        return (root / "built").exists() and name != fail

    def free(name: str) -> bool:
        log(name)
        return name != fail

    def task_build():
        return {"actions": [slow_build], "verbosity": 0}

    def task_use():
        for i in range(4):
            yield {"name": str(i), "actions": [(needs_build, [f"use:{i}"])], "task_dep": ["build"], "verbosity": 0}

    def task_free():
        for i in range(6):
            yield {"name": str(i), "actions": [(free, [f"free:{i}"])], "verbosity": 0}

    return {"task_build": task_build, "task_use": task_use, "task_free": task_free,
            "DOIT_CONFIG": {"dep_file": str(root / "state.db"), "backend": "sqlite3", "verbosity": 0}}


def _run(root: Path, jobs: int, fail: str | None = None, prefetch: bool = True) -> int:
    argv = ["run", "--continue", "-n", str(jobs), "-P", "process", "--reporter", "json",
            "--output-file", str(root / "report.json")]
    if not prefetch:
        return DoitMain(ModuleTaskLoader(_tasks(root, fail))).run(argv)
    with prefetching_runner():
        assert doit.cmd_run.MRunner is PrefetchingRunner
        return DoitMain(ModuleTaskLoader(_tasks(root, fail))).run(argv)


@pytest.mark.parametrize("jobs", [2, 3])
def test_queued_jobs_never_jump_a_dependency(tmp_path: Path, jobs: int) -> None:
    assert _run(tmp_path, jobs) == 0
    ran = (tmp_path / "ran.log").read_text().split()
    assert sorted(ran) == sorted(["build", *(f"use:{i}" for i in range(4)), *(f"free:{i}" for i in range(6))])
    assert all(ran.index(f"use:{i}") > ran.index("build") for i in range(4))
    assert doit.cmd_run.MRunner is MRunner


def test_a_failing_task_is_reported_and_the_rest_still_run(tmp_path: Path) -> None:
    (tmp_path / "ours").mkdir()
    (tmp_path / "doits").mkdir()
    code = _run(tmp_path / "ours", 2, fail="free:3")
    assert code == _run(tmp_path / "doits", 2, fail="free:3", prefetch=False)  # doit's own exit code (2: a group)
    for root in ("ours", "doits"):
        assert len((tmp_path / root / "ran.log").read_text().split()) == 11
        report = json.loads((tmp_path / root / "report.json").read_text())
        failed = [task["name"] for task in report["tasks"] if task["result"] == "fail"]
        assert failed == ["free:3", "free"]  # the task, then its group


class _Heard:
    """A reporter that announces only the `free` tasks' starts and keeps what the main process heard."""

    heard: list[str] = []

    def __init__(self, outstream, options) -> None:
        self.outstream = outstream

    def announces(self, task) -> bool:
        return task.name.startswith("free:")

    def execute_task(self, task) -> None:
        _Heard.heard.append(task.name)

    def __getattr__(self, name):  # every other reporter call: nothing to do
        return lambda *args: None


def test_a_worker_tells_only_the_starts_the_reporter_announces(tmp_path: Path) -> None:
    _Heard.heard = []
    tasks = _tasks(tmp_path)
    tasks["DOIT_CONFIG"]["reporter"] = _Heard
    with prefetching_runner():
        assert DoitMain(ModuleTaskLoader(tasks)).run(["run", "--continue", "-n", "2", "-P", "process"]) == 0
    assert sorted(_Heard.heard) == [f"free:{i}" for i in range(6)]
    assert len((tmp_path / "ran.log").read_text().split()) == 11


def test_jobs_and_results_larger_than_a_pipe_get_through(tmp_path: Path) -> None:
    """A result bigger than a pipe's buffer (a 1 MB value) and a 1 MB job (a task's doc) get through the queues
    while other tasks run and report: the run completes, the value intact (a queue written by the process itself
    would deadlock here if the jobs were written before the workers start)."""
    tasks = _tasks(tmp_path)
    build = tasks["task_build"]
    tasks["task_build"] = lambda: {**build(), "doc": "x" * 1_000_000}

    def big_value() -> dict:
        return {"blob": "y" * 1_000_000}

    tasks["task_big"] = lambda: {"actions": [big_value], "verbosity": 0}
    assert _run_tasks(tasks, 2) == 0
    assert len((tmp_path / "ran.log").read_text().split()) == 11
    values = Dependency(SqliteDB, str(tmp_path / "state.db")).get_values("big")
    assert values == {"blob": "y" * 1_000_000}


def _run_tasks(tasks: dict, jobs: int) -> int:
    with prefetching_runner():
        return DoitMain(ModuleTaskLoader(tasks)).run(["run", "--continue", "-n", str(jobs), "-P", "process"])


def test_a_task_that_leaves_its_conclusion_to_the_main_process_is_concluded_there_before_doit_saves_it(
        tmp_path: Path) -> None:
    """A worker of ours runs the action (`main_concludes()` is true there); the main process then calls the task's
    `conclude()` on the result before doit saves it: its values are saved, and the failure it returns is the
    task's. doit's own runner never asks: there the action concludes itself."""
    import os

    from doit.exceptions import TaskFailed
    from doit.task import Task

    from open_agent_compiler.tasks.parallel import main_concludes

    main_pid = os.getpid()

    class Concluded(Task):
        def conclude(self):
            ran = self.meta.pop("ran", None)
            if ran is None:
                return None
            self.values.update({"ran_in": ran, "concluded_in": os.getpid()})
            return TaskFailed("concluded as failed") if self.name == "bad" else None

    def act(task) -> None:
        if main_concludes():
            task.meta = {**task.meta, "ran": os.getpid()}
        else:
            task.values.update({"ran_in": os.getpid(), "concluded_in": os.getpid()})

    def tasks(root: Path) -> dict:
        def made(name: str):
            return lambda: Concluded(name, [(act,)], meta={}, verbosity=0)
        return {"task_good": made("good"), "task_bad": made("bad"),
                "DOIT_CONFIG": {"dep_file": str(root / "state.db"), "backend": "sqlite3", "verbosity": 0}}

    for root, prefetch in ((tmp_path / "ours", True), (tmp_path / "doits", False)):
        root.mkdir()
        argv = ["run", "--continue", "-n", "2", "-P", "process", "--reporter", "json",
                "--output-file", str(root / "report.json")]
        if prefetch:
            with prefetching_runner():
                code = DoitMain(ModuleTaskLoader(tasks(root))).run(argv)
        else:
            code = DoitMain(ModuleTaskLoader(tasks(root))).run(argv)
        report = json.loads((root / "report.json").read_text())
        results = {task["name"]: task["result"] for task in report["tasks"]}
        values = Dependency(SqliteDB, str(root / "state.db")).get_values("good")
        if prefetch:
            assert code == 1 and results == {"good": "success", "bad": "fail"}
            assert values["concluded_in"] == main_pid != values["ran_in"]
        else:
            assert code == 0 and results == {"good": "success", "bad": "success"}
            assert values["concluded_in"] == values["ran_in"] != main_pid


CHAIN = '''
import sys
from doit.cmd_base import ModuleTaskLoader
from doit.doit_cmd import DoitMain

import open_agent_compiler.tasks.signals  # noqa: F401 - workers die with this process (a hang is killed whole)
from open_agent_compiler.tasks.parallel import prefetching_runner
from open_agent_compiler.execution.deadline import Deadline

root = sys.argv[1]


def step(name):
    Deadline(30).run(lambda: None)  # a test's body: a held result may be written meanwhile
    with open(root + "/ran.log", "a") as handle:
        handle.write(name + "\\n")


def task_chain():
    for i in range(4):
        yield {"name": str(i), "actions": [(step, [str(i)])], "verbosity": 0,
               **({"task_dep": [f"chain:{i - 1}"]} if i else {})}


with prefetching_runner():
    sys.exit(DoitMain(ModuleTaskLoader({"task_chain": task_chain, "DOIT_CONFIG": {
        "dep_file": root + "/state.db", "backend": "sqlite3", "verbosity": 0}})).run(["run", "-n", "2", "-P", "process"]))
'''


def test_a_worker_writes_its_held_result_before_waiting_for_a_job_that_needs_it(tmp_path: Path) -> None:
    """Each task depends on the one before: the next job exists only once the main process has the last result,
    which the worker still holds (written while its next test runs). It writes it before it waits for a job."""
    import subprocess
    import sys

    script = tmp_path / "chain.py"
    script.write_text(CHAIN)
    done = subprocess.run([sys.executable, str(script), str(tmp_path)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "ran.log").read_text().split() == ["0", "1", "2", "3"]
