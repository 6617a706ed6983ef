"""doit's dispatcher lets go of a finished node (cold peak RSS, issue 18): what a later dependent and a `-n`
worker's messages read of it stays (its task, its status), the rest is released, and runs report exactly what
doit's own runners report: the same tasks run, the same failures, a failed dependency still fails its
dependents and the group."""

import json
from pathlib import Path
from typing import Any

import pytest
from doit.cmd_base import ModuleTaskLoader
from doit.doit_cmd import DoitMain

from open_agent_compiler.tasks import parallel
from open_agent_compiler.tasks.parallel import prefetching_runner


def _tasks(root: Path, fail: set[str]) -> dict:
    def step(name: str) -> bool:
        with open(root / "ran.log", "a") as handle:
            handle.write(name + "\n")
        return name not in fail

    def task_build():
        return {"actions": [(step, ["build"])], "verbosity": 0}

    def task_use():  # the group first, as doit builds it from a generator (its task_dep: every subtask)
        for i in range(3):
            yield {"name": str(i), "actions": [(step, [f"use:{i}"])], "task_dep": ["build"], "verbosity": 0}

    def task_free():
        for i in range(4):
            yield {"name": str(i), "actions": [(step, [f"free:{i}"])], "verbosity": 0}

    def task_last():  # depends on a whole group: reads its subtasks' nodes after they were released
        return {"actions": [(step, ["last"])], "task_dep": ["free"], "verbosity": 0}

    return {"task_build": task_build, "task_use": task_use, "task_free": task_free, "task_last": task_last,
            "DOIT_CONFIG": {"dep_file": str(root / "state.db"), "backend": "sqlite3", "verbosity": 0}}


def _run(root: Path, jobs: int, fail: set[str], ours: bool) -> tuple[int, list[str], list[tuple[str, str]]]:
    root.mkdir()
    argv = ["run", "--continue", "--reporter", "json", "--output-file", str(root / "report.json")]
    if jobs > 1:
        argv += ["-n", str(jobs), "-P", "process"]
    main = DoitMain(ModuleTaskLoader(_tasks(root, fail)))
    if ours:
        with prefetching_runner():
            code = main.run(argv)
    else:
        code = main.run(argv)
    ran = sorted((root / "ran.log").read_text().split()) if (root / "ran.log").exists() else []
    report = json.loads((root / "report.json").read_text())
    return code, ran, sorted((task["name"], task["result"]) for task in report["tasks"])


@pytest.mark.parametrize("jobs", [1, 2])
@pytest.mark.parametrize("fail", [set(), {"free:2"}, {"build"}])
def test_released_nodes_report_what_doits_runner_reports(tmp_path: Path, jobs: int, fail: set[str]) -> None:
    ours = _run(tmp_path / "ours", jobs, fail, ours=True)
    assert ours == _run(tmp_path / "doits", jobs, fail, ours=False)
    if "build" in fail:
        assert ("use:0", "fail") in ours[2] and "use:0" not in ours[1]  # the unmet dependency, as doit says
    if "free:2" in fail:
        assert ("last", "fail") in ours[2] and "last" not in ours[1]


def test_a_finished_node_keeps_only_its_task_and_status(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[Any] = []
    release = parallel.release_done_nodes

    def capture(dispatcher: Any) -> None:
        seen.append(dispatcher)
        release(dispatcher)

    monkeypatch.setattr(parallel, "release_done_nodes", capture)
    code, ran, _ = _run(tmp_path / "ours", 1, {"free:1"}, ours=True)
    assert code != 0 and len(ran) == 1 + 3 + 4 and "last" not in ran
    [dispatcher] = seen
    assert dispatcher.nodes and all(set(vars(node)) == set(parallel._DONE_NODE_KEEPS)
                                    for node in dispatcher.nodes.values())
    assert dispatcher.nodes["free:1"].run_status == "failure" and dispatcher.nodes["last"].run_status == "failure"
    # a done node's finished generator is swapped for the one spent generator (its frame's memory freed) at the
    # dispatcher's next update: all but the nodes done last, whose generators ended all the same
    own = [node.generator for node in dispatcher.nodes.values() if node.generator is not parallel._SPENT]
    assert len(own) <= 2 < len(dispatcher.nodes) and all(generator.gi_frame is None for generator in own)
    assert next(parallel._SPENT, "stopped") == "stopped"


def _dispatcher(tasks: list[Any]) -> Any:
    from doit.control import TaskControl

    control = TaskControl(tasks)
    control.process([task.name for task in tasks])
    return control.task_dispatcher()


def test_a_task_that_waits_for_nothing_steps_as_doits_walk_steps_it() -> None:
    """The short path (`tasks.lean_dispatch`) gives a dependency-free task the steps doit's own walk gives it (the
    task, once), and leaves a task with a dependency, a calc_dep or a setup task to doit's walk."""
    from doit.task import Task

    from open_agent_compiler.tasks.lean_dispatch import lean_add_task, spent_once

    def tasks() -> list[Any]:
        return [Task("free", [(print, [])]), Task("dep", [(print, [])], task_dep=["free"]),
                Task("calc", [(print, [])], calc_dep=["free"]), Task("setup", [(print, [])], setup=["free"])]

    plain, lean = _dispatcher(tasks()), _dispatcher(tasks())
    lean_add_task(lean)
    for name in ("free", "dep", "calc", "setup"):
        doits, ours = plain._gen_node(None, name), lean._gen_node(None, name)
        if name == "free":
            assert not isinstance(ours.generator, type(doits.generator))  # the short path was taken
            assert [step.name for step in ours.generator] == [step.name for step in doits.generator] == ["free"]
            assert spent_once(ours.generator)
        else:
            assert type(ours.generator) is type(doits.generator)  # doit's walk
            assert _shown(next(ours.generator)) == _shown(next(doits.generator))


def _shown(step: Any) -> str:
    """A dispatcher step as text: a node or task by name, a word ("wait") as it is."""
    return step if isinstance(step, str) else getattr(step, "task", step).name
