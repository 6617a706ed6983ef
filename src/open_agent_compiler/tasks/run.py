"""Run the test graph through doit, for `oac test` (the `doit test` path goes through `dodo.task_test`)."""

import sys
from pathlib import Path
from collections.abc import Callable
from typing import Any, TextIO

from doit.cmd_base import TaskLoader2
from doit.doit_cmd import DoitMain
from doit.loader import generate_tasks

from open_agent_compiler.tasks.doit_plugins import plugins_scanned_once
from open_agent_compiler.tasks.file_checker import OacFileChecker
from open_agent_compiler.tasks.gc_tuning import fewer_collections
from open_agent_compiler.tasks.parallel import prefetching_runner
from open_agent_compiler.execution import leftovers, watchdog, zygote
from open_agent_compiler.tasks.records import write_records_now
from open_agent_compiler.testing.strict import nothing_verified
from open_agent_compiler.tasks.graph import TEST_GROUP, TestPlan
from open_agent_compiler.errors import ResultsError
from open_agent_compiler.tasks.records import ResultsLogLost
from open_agent_compiler.tasks.reporter import OacReporter
from open_agent_compiler.tasks.settings import TestOptions
from open_agent_compiler.tasks.signals import InterruptState, finish_interrupted, orderly_interrupts

BACKEND_NAME = "oac"
BACKEND_LOCATION = "open_agent_compiler.tasks.backend:OacStateDB"


def doit_config(options: TestOptions) -> dict[str, Any]:
    """The doit settings both entry points share: same state file, same backend."""
    return {
        "dep_file": str(options.state_db),
        "backend": BACKEND_NAME,
        "continue": True,
        "verbosity": 0,
        "check_file_uptodate": OacFileChecker,
    }


class PlanLoader(TaskLoader2):
    """Hands doit the tasks of one TestPlan, exactly as `task_test` would yield them from a dodo.py."""

    def __init__(self, plan: TestPlan, reporter: OacReporter, keep: Callable[[str], bool] | None = None) -> None:
        super().__init__()
        self.plan = plan
        self.reporter = reporter
        self.keep = keep  # only these tasks (by name) are handed to doit; None: all of them

    def load_doit_config(self) -> dict[str, Any]:
        config = doit_config(self.plan.options)
        config["reporter"] = self.reporter
        return config

    def load_tasks(self, cmd: Any, pos_args: list[str]) -> list[Any]:
        tasks = self.plan.task_dicts()
        if self.keep is not None:
            tasks = (task for task in tasks if self.keep(task.name))
        return generate_tasks(TEST_GROUP, tasks, "oac tests")


def run_tests(options: TestOptions, out: TextIO | None = None, *, process_ends: bool = False) -> int:
    """Run; return 0 (no failures), 1 (a test failed), 128 + signal (interrupted: see `tasks.signals`). Bad input
    raises OacError. `process_ends`: the caller exits right after (the CLI), so the GC settings are kept."""
    with fewer_collections(restore=not process_ends, defer=True), orderly_interrupts() as interrupt:
        try:
            return _run_tests(options, out or sys.stdout, interrupt)
        finally:
            leftovers.end_handlers()


def _run_tests(options: TestOptions, out: TextIO, interrupt: InterruptState) -> int:
    zygote.start()  # before the registry exists, so handler children fork from a small process
    watchdog.before_user_code(write_records_now)
    plan = TestPlan(options)
    for note in plan.notes:
        print(f"oac: {note}", file=sys.stderr)
    return _run_plan(plan, out, interrupt)


def run_plan(plan: TestPlan, out: TextIO | None = None, *, unchanged: int = 0) -> int:
    """`run_tests` of a plan made before (`tasks.resident`): `unchanged` tests it does not hand to doit are
    counted as doit would count them, discovered and skipped green."""
    with fewer_collections(restore=False, defer=True), orderly_interrupts() as interrupt:
        return _run_plan(plan, out or sys.stdout, interrupt, unchanged)


def _run_plan(plan: TestPlan, out: TextIO, interrupt: InterruptState, unchanged: int = 0) -> int:
    options = plan.options
    plan.prefetching = True  # every planned task is selected: handlers of tests that will run may start early
    reporter = OacReporter(out)
    reporter.tally.discovered = reporter.tally.skipped = unchanged
    reporter._force = options.force
    reporter.stoppable = True  # tasks.parallel's runners end dispatch at --maxfail
    argv = ["run", "--continue"]
    if options.jobs > 1:  # doit's -n 1 still forks one worker; serial runs stay in-process
        leftovers.handler_marker(options.root)  # made here, the workers' handlers share the engine's pid file
        argv += ["-n", str(options.jobs), "-P", "process"]
    if options.force:
        argv.append("--always-execute")
    main = DoitMain(PlanLoader(plan, reporter), config_filenames=(),
                    extra_config={"BACKEND": {BACKEND_NAME: BACKEND_LOCATION}})
    try:
        with prefetching_runner(), plugins_scanned_once():
            code = main.run(argv)
    except KeyboardInterrupt:
        return finish_interrupted(interrupt, reporter, options)
    except ResultsLogLost as exc:  # (from a -n worker, doit re-raises it by class with the message)
        raise ResultsError(str(exc.code if exc.code is not None else exc)) from None
    if options.junit:
        from open_agent_compiler.tasks.junit import write_junit  # (xml.etree: only when a report is asked for)

        write_junit(options.junit if options.junit.is_absolute() else options.root / options.junit, reporter.tally)
    tally = reporter.tally
    if plan.shared is not None and plan.shared.failure is not None and options.require_shared_state:
        return 2  # the failure was told when it happened
    if tally.failed or (tally.flaky and options.flaky_as == "fail"):
        return 1
    if code == 3 or tally.errors:
        return 2 if not tally.discovered else 1
    if options.strict and not tally.discovered:
        print("oac: --strict: the config has no tests: nothing was checked", file=sys.stderr)
        return 2
    if unverified := nothing_verified(tally.passed, tally.failed, tally.skipped, tally.not_runnable):
        print(f"oac: note: {unverified}", file=sys.stderr)  # not an error unless asked (--strict), as in 1.16.5
    return 0
