"""`oac test --list`: the selected tests and whether each is green, without running anything.

The plan is the one a run builds (same selection, same keys) and "green" is doit's own answer for the task
(`Dependency.get_status`: its key check and its file_dep), asked exactly as a run asks it, so `--list` says
"green" iff `oac test` would skip the test. Nothing is written: the state database is opened read-only in spirit
(no task is saved) and closed without a flush of anything new.
"""

from typing import Any

from doit.dependency import Dependency
from doit.globals import Globals

from open_agent_compiler.tasks.backend import OacStateDB
from open_agent_compiler.tasks.file_checker import OacFileChecker
from open_agent_compiler.tasks.gc_tuning import fewer_collections
from open_agent_compiler.tasks.graph import TestPlan, retire
from open_agent_compiler.tasks.settings import TestOptions


def list_tests(options: TestOptions, *, process_ends: bool = False) -> list[dict[str, Any]]:
    """One entry per selected test: id, kind, target, tags, green (and since when). `process_ends`: as in
    `tasks.run.run_tests` (the GC settings of a run are kept)."""
    with fewer_collections(restore=not process_ends, defer=True):
        return _list_tests(options)


def _list_tests(options: TestOptions) -> list[dict[str, Any]]:
    plan = TestPlan(options)
    previous = Globals.dep_manager
    manager = Dependency(OacStateDB, str(options.state_db), checker_cls=OacFileChecker) \
        if options.state_db.is_file() else None
    Globals.dep_manager = manager
    try:
        tasks = {task.name: task for task in plan.task_dicts()}
        listed = []
        for case in plan.cases:
            name = plan.names[case.test_id]
            green_at = None
            if manager is not None and not options.force and plan.repeat == 1:
                if manager.get_status(tasks[name], tasks).status == "up-to-date":
                    green_at = plan.green_at(name, case.test_id) or "an earlier run"
            listed.append({"id": case.test_id, "kind": case.kind, "target": case.target_name,
                           "tags": list(case.test.tags), "green": green_at is not None, "green_at": green_at})
        return listed
    finally:
        Globals.dep_manager = previous
        if manager is not None:
            manager.close()
        retire(plan.run_id)


def list_line(entry: dict[str, Any]) -> str:
    tags = ",".join(entry["tags"]) or "-"
    state = f"green since {entry['green_at']}" if entry["green"] else "will run"
    return f"{entry['id']}  {entry['kind']}  {entry['target']}  tags={tags}  {state}"
