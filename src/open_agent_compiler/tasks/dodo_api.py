"""What a project's dodo.py imports so that `doit test` runs the very graph `oac test` runs."""

import gc
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import doit.cmd_run
from doit.doit_cmd import DoitMain
from doit.exceptions import TaskFailed
from doit.runner import MRunner, Runner

from open_agent_compiler.errors import NothingSelected, OacError
from open_agent_compiler.tasks.file_checker import OacFileChecker
from open_agent_compiler.tasks.gc_tuning import RUN_THRESHOLDS
from open_agent_compiler.tasks.graph import TEST_GROUP, TestPlan
from open_agent_compiler.tasks.parallel import StopWhenTold
from open_agent_compiler.execution import watchdog, zygote
from open_agent_compiler.tasks.records import write_records_now
from open_agent_compiler.tasks.reporter import OacReporter
from open_agent_compiler.tasks.settings import STATE_DB, STATE_DIR, build_options


DOIT_CONFIG: dict[str, Any] = {
    "dep_file": f"{STATE_DIR}/{STATE_DB}",
    "backend": "oac",
    "continue": True,
    "verbosity": 0,
    "reporter": OacReporter,
    "check_file_uptodate": OacFileChecker,
}


def task_test() -> Iterator[dict[str, Any]]:
    """oac tests of the config named in [tool.oac] (pyproject.toml); doit skips the green ones."""
    gc.set_threshold(*RUN_THRESHOLDS)  # the whole doit process is one run: see gc_tuning
    if watchdog.console_of("doit"):  # `doit test` runs user code watched from outside, as `oac test` does
        watchdog.supervise()
    watchdog.before_user_code(write_records_now)
    zygote.start()
    try:
        plan = TestPlan(build_options(Path.cwd(), command_line_values()))
    except NothingSelected as exc:  # `doit test` fails saying so; the dodo's other tasks (`doit compile`) still load
        yield {"basename": "test", "doc": "oac tests (none selected)", "verbosity": 0,
               "actions": [(_nothing_to_test, [str(exc)])]}
        return
    except OacError as exc:
        print(f"oac: {exc}", file=sys.stderr)
        raise SystemExit(2) from None
    _stop_at_maxfail()
    if _runs_tasks():  # what `oac test` says before its run (migration notes, ...), said by `doit test` too
        for note in plan.notes:
            print(f"oac: {note}", file=sys.stderr)
    for task in plan.task_dicts():
        if task.name == TEST_GROUP:  # `doit test -x` / `doit test --maxfail N`: the group's own parameters
            task.params = STOP_PARAMS
        yield task


# what CI gives `oac test` as options, given to `doit test` as doit's command-line variables (`doit test shard=1/3
# junit=results/junit.xml`): read while the dodo loads, before the graph is built (a task parameter is parsed after
# it, too late to choose the tests)
COMMAND_LINE_VALUES = ("shard", "shard_by", "junit", "results", "pipeline")


def _runs_tasks() -> bool:
    """Whether this doit process runs tasks: not `doit list`, `doit info`, `doit forget`, ... (which load the
    dodo too). A program running doit in process is taken to run them."""
    if not watchdog.console_of("doit"):
        return True
    commands = {command.get_name() for command in DoitMain.DOIT_CMDS} - {"run"}
    args = iter(sys.argv[1:])
    for arg in args:
        if arg in _VALUED_OPTIONS:
            next(args, None)  # its value
        elif not arg.startswith("-") and "=" not in arg:  # (name=value: a command-line variable)
            return arg not in commands
    return True


_VALUED_OPTIONS = frozenset({"-f", "--file", "-d", "--dir", "--db-file", "--backend", "--codec",
                             "--check_file_uptodate"})  # doit's loader options that take the next argument


def command_line_values() -> dict[str, Any]:
    from doit import get_var

    found: dict[str, Any] = {}
    for name in COMMAND_LINE_VALUES:
        value = get_var(name)
        if value:
            found[name] = Path(value) if name in ("junit", "results") else value
    return found


STOP_PARAMS = (
    {"name": "exitfirst", "short": "x", "long": "exitfirst", "type": bool, "default": False,
     "help": "stop after the first failing test (as maxfail = 1)"},
    {"name": "maxfail", "long": "maxfail", "type": int, "default": 0,
     "help": "stop after N failing tests (0: never; default: maxfail in [tool.oac])"},
)


class _StopsAtMaxfail(StopWhenTold):
    """doit's runner that stops dispatching once the reporter's tally reached maxfail: from `doit test -x` /
    `--maxfail N`, else `maxfail` of [tool.oac] (the reporter read it from the plan). Tests already running
    finish and are reported, as under `oac test`."""

    def run_tasks(self, task_dispatcher: Any) -> None:
        reporter = self.reporter
        tally = getattr(reporter, "tally", None)
        if tally is not None:
            group = task_dispatcher.tasks.get(TEST_GROUP)
            given = (group.options or {}) if group is not None else {}
            asked = 1 if given.get("exitfirst") else int(given.get("maxfail") or 0)
            if asked:
                tally.maxfail = asked
            reporter.stoppable = True  # this runner does stop: the reporter may say so
        super().run_tasks(task_dispatcher)  # type: ignore[misc]


class _StoppingRunner(_StopsAtMaxfail, Runner):
    pass


class _StoppingMRunner(_StopsAtMaxfail, MRunner):
    pass


def _stop_at_maxfail() -> None:
    """doit's `run` command takes its runners by name from `doit.cmd_run` when it runs the loaded tasks: for the
    rest of this `doit` process, the same runners that also stop at maxfail (doit's own `--continue` switch can
    only stop at the first failure of any task, and only from the config)."""
    if not issubclass(doit.cmd_run.Runner, _StopsAtMaxfail):
        doit.cmd_run.Runner = _StoppingRunner  # type: ignore[misc]
    if not issubclass(doit.cmd_run.MRunner, _StopsAtMaxfail):
        doit.cmd_run.MRunner = _StoppingMRunner  # type: ignore[misc]


def _nothing_to_test(message: str) -> TaskFailed:
    return TaskFailed(message)
