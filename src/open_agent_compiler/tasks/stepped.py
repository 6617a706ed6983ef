"""One doit run of a plan that its caller steps through, one task (and what it depends on) at a time: the pytest
plugin's session, where pytest, not doit, decides which test runs next (its own order, `-k`, `-x`, xdist).

doit sets the run up as for `oac test` — the same loader, config, backend, file checker and reporter, one
`DoitMain.run` — but its runner keeps the run open instead of running it: `run_all` initialises the reporter and
hands back the runner and the task dispatcher. Each `step(name)` is then doit's own `run_tasks` over a dispatcher
of that one task, sharing the run's nodes, so a dependency (the compile task) runs once and its outcome holds for
every later step; doit decides up to date, runs the action, saves the result and calls the reporter. `finish` is
doit's end of the run: the backend saves and closes, the reporter completes. The state, the backend and the shared
state are opened once per run, whatever the number of steps.
"""

from collections.abc import Iterator
from contextlib import contextmanager

import doit.cmd_run
from doit.control import TaskDispatcher
from doit.doit_cmd import DoitMain
from doit.exceptions import InvalidTask
from doit.globals import Globals
from doit.runner import SUCCESS, Runner

from open_agent_compiler.errors import OacError
from open_agent_compiler.tasks.graph import TEST_GROUP, TestPlan
from open_agent_compiler.tasks.reporter import OacReporter
from open_agent_compiler.tasks.run import BACKEND_LOCATION, BACKEND_NAME, PlanLoader


class _HeldRunner(Runner):
    """doit's serial runner, kept open: `run_all` prepares the run and returns without running a task."""

    held: list[tuple[Runner, TaskDispatcher]] = []

    def run_all(self, task_dispatcher: TaskDispatcher) -> int:
        if hasattr(self.reporter, "initialize"):
            self.reporter.initialize(task_dispatcher.tasks, task_dispatcher.selected_tasks)
        type(self).held.append((self, task_dispatcher))
        return SUCCESS


@contextmanager
def _holding() -> Iterator[list[tuple[Runner, TaskDispatcher]]]:
    """doit's `run` command takes its serial runner by name from `doit.cmd_run`: ours, for one set-up."""
    original = doit.cmd_run.Runner
    held: list[tuple[Runner, TaskDispatcher]] = []
    runner = type("HeldRunner", (_HeldRunner,), {"held": held})
    doit.cmd_run.Runner = runner  # type: ignore[misc]
    try:
        yield held
    finally:
        doit.cmd_run.Runner = original  # type: ignore[misc]


class SteppedRun:
    """One doit run of `plan`'s tasks, executed one `step` at a time; `finish` ends it (once)."""

    def __init__(self, plan: TestPlan, reporter: OacReporter) -> None:
        self.plan = plan
        self.reporter = reporter
        main = DoitMain(PlanLoader(plan, reporter), config_filenames=(),
                        extra_config={"BACKEND": {BACKEND_NAME: BACKEND_LOCATION}})
        argv = ["run", "--continue", *(["--always-execute"] if plan.options.force else []), TEST_GROUP]
        with _holding() as held:
            code = main.run(argv)
        if not held:
            raise OacError(f"doit could not set up the run of the tests (doit exit code {code})")
        self.runner, dispatcher = held[0]
        self.tasks = dispatcher.tasks
        self.targets = dispatcher.targets
        self.nodes = dispatcher.nodes  # every step's dispatcher shares them: what ran once is done
        self.manager = Globals.dep_manager
        self.steps = 0
        self.finished = False

    def step(self, name: str) -> None:
        """Run task `name` (and the tasks it depends on that did not run yet) as doit's runner does."""
        if self.finished:
            raise RuntimeError("the doit run has finished")
        Globals.dep_manager = self.manager  # the plan's green check reads it
        self.nodes.pop(name, None)  # a test run again in the same session (e.g. a rerun plugin) runs again
        dispatcher = TaskDispatcher(self.tasks, self.targets, [name])
        dispatcher.nodes = self.nodes
        self.steps += 1
        try:
            self.runner.run_tasks(dispatcher)
        except InvalidTask as exc:
            self.reporter.runtime_error(str(exc))

    def finish(self) -> int:
        """doit's end of the run: the state saved and closed, the reporter completed; doit's result code."""
        if self.finished:
            return int(self.runner.final_result)
        self.finished = True
        Globals.dep_manager = self.manager
        return int(self.runner.finish())
