"""The task graph: one compile task per (config, dialect), one doit task per discovered test, in every run.

A test task's `uptodate` check compares its composite key (see `keys.key`) with the key of its last pass,
read from our backend's bulk-loaded columns; its `file_dep` are the files its key covers (handler scripts,
callable-mock modules, discovered project imports). Agent tests depend on the compile task, which writes the
build they run from; capability tests judge the compiled bytes in memory (their digest is in the key).
doit decides what runs. Failed runs leave no green state, so they always run again.
"""

import inspect
import os
import re
import time
import uuid
from types import MappingProxyType
from collections.abc import Iterator
from functools import cached_property, partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

import xxhash
from doit.action import PythonAction
from doit.exceptions import TaskFailed
from doit.globals import Globals
from doit.task import Task

from open_agent_compiler.model.registry import ResolvedConfig
from open_agent_compiler.tasks import planning
from open_agent_compiler.testing.judges import judge_key, load_judge
from open_agent_compiler.tasks.backend import OacStateDB
from open_agent_compiler.tasks.build_sync import build_intact, sync_build
from open_agent_compiler.tasks.file_checker import OacFileChecker
from open_agent_compiler.tasks.parallel import main_concludes
from open_agent_compiler.tasks.records import ResultsLogLost, append_record, build_record
from open_agent_compiler.tasks.settings import TestOptions
from open_agent_compiler.tasks.shared_keys import shared_pass_key
from open_agent_compiler.errors import OacError, ResultsError
from open_agent_compiler.tasks.state_paths import check_state_paths
from open_agent_compiler.usercode import project_imports, reads
from open_agent_compiler.usercode.project_imports import CHANGED_MARK, LINK_MARK, STAT_MARK
from open_agent_compiler.testing.discovery import TestCase
from open_agent_compiler.keys.key import KeyParts, callable_specs, discovered_path, plain_relative
from open_agent_compiler.testing.mocks import resolve_mock
from open_agent_compiler.execution.prefetch import HandlerPrefetch
from open_agent_compiler.history.log import TestOutcome, now_iso
from open_agent_compiler.execution import leftovers

if TYPE_CHECKING:
    from open_agent_compiler.testing.runner import RunSettings

TEST_GROUP = "test"
COMPILE_GROUP = "oac_compile"
_UNSAFE = re.compile(r"[^A-Za-z0-9_.:/@+-]")
_PLANS: dict[str, "TestPlan"] = {}  # run_id → plan, so a reporter built by doit can find its run
_TASK_ONLY = inspect.Signature([inspect.Parameter("task", inspect.Parameter.POSITIONAL_OR_KEYWORD)])
_TASK_VALUES = inspect.Signature([inspect.Parameter(n, inspect.Parameter.POSITIONAL_OR_KEYWORD)
                                  for n in ("task", "values")])


def repeat_id(test_id: str, index: int) -> str:
    """The id of one repeat of a test under `--repeat N` (1-based index)."""
    return f"{test_id}@r{index}"


def task_name(config: str, test_id: str) -> str:
    """A doit-safe, stable name: readable where possible, with a digest suffix where characters were replaced."""
    raw = f"{config}:{test_id}"
    safe = _UNSAFE.sub("_", raw)
    return safe if safe == raw else f"{safe}~{xxhash.xxh32_hexdigest(raw.encode('utf-8', 'surrogatepass'))}"


class CompiledCheck:
    """Up to date iff the compile task last wrote exactly this output and every file it wrote is unchanged on
    disk (doit also checks its targets exist)."""

    __signature__ = _TASK_VALUES  # doit inspects an uptodate callable per task: give it the answer at once

    def __init__(self, key: str, build_dir: Path) -> None:
        self.key = key
        self.build_dir = build_dir

    def __call__(self, task: Any, values: dict[str, Any]) -> bool:
        return values.get("compiled") == self.key and build_intact(self.build_dir, values.get("files", {}))

    def __repr__(self) -> str:
        return "oac compile check: the build dir does not hold this compiled output"


class GreenCheck:
    """A test task's `uptodate`: its key equals the key of its last pass (one per plan, shared by its tasks)."""

    __signature__ = _TASK_ONLY  # only `task`: doit then decodes no saved values to call us

    def __init__(self, plan: "TestPlan") -> None:
        self.plan = plan
        self.last: tuple[str, str | None] = ("", None)  # (task name, green_at) of the last check: its report's

    def __call__(self, task: Any) -> bool:
        name = task.name
        at = self.plan.green_at(name, self.plan.test_ids[name])
        self.last = (name, at)
        return at is not None

    def last_green_at(self, name: str) -> str | None:
        """What the check of task `name` just found, when it was the last one checked (doit reports a task
        skipped right after checking it), else asked anew."""
        last_name, at = self.last
        return at if last_name == name else self.plan.green_at(name, self.plan.test_ids[name])

    def __repr__(self) -> str:  # what `doit info` prints when the check fails
        return "oac key check: the test's key is not the key of a passing run (`oac test --explain` says which part)"


class TestPlan:
    """Everything one run needs, computed once by the planning pipeline (see `planning`)."""

    __test__ = False
    only: set[str] | None = None  # the test ids handed to doit (None: all); a watch cycle's (`tasks.resident`)

    def __init__(self, options: TestOptions) -> None:
        check_state_paths(options)  # every place the run writes is usable, before anything runs
        leftovers.clean(options.root)  # harness processes and scratch folders a killed run left (by pid file)
        self.options = options
        self.run_id = uuid.uuid4().hex
        self.root = options.root  # resolved once: `options.root` resolves the path on every call
        self.results_path = options.results_path
        # None: local state only; else it connects and reads while the registry loads (opened below)
        self.shared = planning.shared_session(options, f"{TEST_GROUP}:{_UNSAFE.sub('_', options.config + ':')}")
        # user code that runs at load time is bounded by the run's --timeout: blocked, it is one line and exit 2
        self.resolved: ResolvedConfig = planning.bounded(options, f"factory {options.factory!r}", planning.load,
                                                         options)
        self.cases, self.notes = planning.choose_tests(self.resolved, options)
        invoker = None
        self.invoker_key = None  # part of agent tests' keys
        if options.invoker:  # the invokers (and what they import) load only when agent tests will run
            from open_agent_compiler.testing.invokers.select import invoker_key, load_invoker

            invoker = planning.bounded(options, f"invoker {options.invoker!r}", partial(
                load_invoker, options.invoker, root=self.root, factory=options.factory,
                script=options.invoker_script, dialect=options.dialect, record=options.record,
                record_settings={"record_base_url": options.record_base_url, "record_model": options.record_model}))
            self.invoker_key = invoker_key(options.invoker, invoker, self.root)
        judge = planning.bounded(options, f"judge {options.judge!r}", load_judge, options.judge, self.root)
        self.judge_key = judge_key(options.judge, judge, self.root)  # part of the keys of tests with llm_judge
        self.by_id = {case.test_id: case for case in self.cases}
        self.names = {test_id: f"{TEST_GROUP}:{task_name(options.config, test_id)}" for test_id in self.by_id}
        self.test_ids = {name: test_id for test_id, name in self.names.items()}
        if self.shared is not None:
            self.shared.open(list(self.test_ids))
        # --repeat N: each repeat its own task, never green-skipped (tasks.repeats); task name → repeat index
        self.repeat = options.repeat
        self.repeat_of: dict[str, int] = {}
        if self.repeat > 1:
            for case in self.cases:
                for index in range(1, self.repeat + 1):
                    name = f"{TEST_GROUP}:{task_name(options.config, repeat_id(case.test_id, index))}"
                    self.repeat_of[name] = index
                    self.test_ids[name] = case.test_id
        self.needs_compile = any(case.kind != "tool" for case in self.cases)
        # Only agent tests run from files (a harness is started in a copy of the build); capability tests judge
        # the compiled bytes in memory, so a run without agent tests has no compile task and writes no build.
        self.writes_build = any(case.kind == "agent" for case in self.cases)
        self.compiled = planning.compile_dialect(self.resolved, options, self.needs_compile)
        self.compile_task = f"{COMPILE_GROUP}:{task_name(options.config, options.dialect)}"
        self.keyer = planning.Keyer(self.resolved, self.cases, self.compiled, options,
                                    planning.discovered_imports(options, self.names, self.shared),
                                    invoker=self.invoker_key,
                                    judge=self.judge_key)
        self.scopes: dict[str, str] | None = {} if self.shared is not None else None  # test id → key scope
        self.keys = planning.test_keys(self.cases, self.resolved, self.compiled, options, self.keyer,
                                       options.state_dir / "key-cache" / f"{options.dialect}.json",
                                       self.shared.scoped_keys(self.names) if self.shared is not None else None,
                                       self.scopes)
        if self.shared is not None:
            self._adopt_shared_passes()
            backend = getattr(Globals.dep_manager, "backend", None)
            if isinstance(backend, OacStateDB) and Path(backend.name).resolve() == options.state_db:
                backend.attach_shared(self.shared)  # `doit test`: doit opened the state before this plan
        self._invoker = invoker
        self._judge = judge
        self.prefetch = HandlerPrefetch([])
        self.prefetching = False  # only `oac test` runs every task it plans; a `doit` selection may run a few
        self.green_check = GreenCheck(self)
        self.task_meta = {"oac": {"run_id": self.run_id}}  # every test task's meta until its action gives its own
        self.compile_error: str | None = None
        _PLANS[self.run_id] = self

    @cached_property
    def settings(self) -> "RunSettings":
        """What running a test needs; the test runner (and what it imports: evaluators, handlers, the capability
        read-back) is imported when the first test runs, never by a run whose tests are all green."""
        from open_agent_compiler.testing.runner import RunSettings

        options = self.options
        return RunSettings(project_root=options.root, build_dir=options.build_dir, dialect=options.dialect,
                           timeout=options.timeout, hermetic=options.hermetic, invoker=self._invoker,
                           judge=self._judge, strict=options.strict)

    def _adopt_shared_passes(self) -> None:
        """Tests whose current key passed on another machine: the backend makes that its own green row, with the
        states of the files the key covers (the key proves they are the bytes that passed)."""
        shared = self.shared
        assert shared is not None
        shared.refresh()  # what other runners proved while this plan loaded and keyed
        checker = OacFileChecker()
        for test_id, name in self.names.items():
            key = self.keys[test_id]
            known = shared.last(name, key)
            if known is None and (found := shared_pass_key(self.keyer, shared, self.root, test_id, name)):
                self.keyer.rekey(test_id, found[1])  # its key over the files a shared pass of it loaded
                key = self.keys[test_id] = found[0]
                known = shared.last(name, key)
            if known is not None and known.status == "pass":
                shared.adopt(name, key, known, {path: checker.digest(path) for path in self.file_dep(test_id)})

    def planned_cases(self) -> list[TestCase]:
        """The tests handed to doit: all, or the ones a watch cycle chose (`only`)."""
        only = self.only
        return self.cases if only is None else [case for case in self.cases if case.test_id in only]

    def renew_run_id(self) -> None:
        """Another run of this plan (a watch cycle, in its own process): its records carry a run id of their own."""
        _PLANS.pop(self.run_id, None)
        self.run_id = uuid.uuid4().hex
        self.task_meta = {"oac": {"run_id": self.run_id}}
        _PLANS[self.run_id] = self

    # kept for callers that knew the plan's parts before the pipeline
    @property
    def contents(self) -> dict[str, bytes]:
        return self.compiled.contents

    @property
    def artifact_digests(self) -> dict[str, str]:
        return self.compiled.artifact_digests

    def parts_of(self, test_id: str) -> KeyParts:
        return self.keyer.parts_of(test_id)

    def adopt_imports(self, test_id: str, imports: list[str]) -> None:
        """Key the test over the project files this run found it loads (a depfile), so the key saved with its
        pass is the key the next run computes from the saved imports."""
        known = self.keyer.discovered.get(test_id, ())
        if not imports and not known:  # (most tests: nothing loaded, nothing known)
            return
        found = [discovered_path(self.root, path) for path in imports]
        if sorted(found) != sorted(known):
            self.keyer.rekey(test_id, found)
            self.keys[test_id] = self.parts_of(test_id).key()

    def green_at(self, name: str, test_id: str) -> str | None:
        """When the test's last pass under its current key finished, or None: it must run."""
        manager = Globals.dep_manager
        if manager is None:
            return None
        key = self.keys[test_id]
        if self.shared is not None and (known := self.shared.last(name, key)) is not None:
            # the last run under this key anywhere decides: a failure on another machine cancels a pass here
            return (known.finished_at or "another machine") if known.status == "pass" else None
        backend = manager.backend
        if isinstance(backend, OacStateDB):  # indexed columns, no JSON to decode
            saved_key, at = backend.green(name)
            return (at or "an earlier run") if saved_key == key else None
        values = manager.get_values(name)  # any other doit backend: the saved values say the same
        if values.get("key") == key and values.get("status") == "pass":
            return values.get("at", "an earlier run")
        return None

    # task dictionaries (doit's dodo format) -------------------------------------------------------------------
    def task_dicts(self) -> Iterator[dict[str, Any]]:
        if self.prefetching:
            self._start_prefetch()
        if self.writes_build:
            build_dir = str(self.options.build_dir)
            compile_task = Task(
                self.compile_task, [(compile_action, [self.run_id])],
                doc=f"compile config {self.options.config!r} for {self.options.dialect} into {build_dir}",
                uptodate=[CompiledCheck(self.compiled.key, self.options.build_dir)],
                targets=[f"{build_dir}/{path}" for path in sorted(self.compiled.contents)],
                meta={"oac_compile": {"run_id": self.run_id}}, verbosity=0, subtask_of=COMPILE_GROUP)
            yield Task(COMPILE_GROUP, None, doc="compile the tested config into .oac/build (what agent tests run from)",
                       has_subtask=True, task_dep=[compile_task.name])
            yield compile_task
        yield from self._test_tasks()

    def _test_tasks(self) -> Iterator[Task]:
        """The `test` group and one task per test, as doit Task objects built by copying one prototype: doit's
        Task() checks and normalises every attribute (~50 µs a task); a copy with its own mutable parts costs
        ~10 µs. Each is what doit would build from {name, doc, actions, uptodate, file_dep, task_dep, meta}."""
        group = Task(TEST_GROUP, None, doc="oac tests of the config named in [tool.oac] (pyproject.toml)",
                     has_subtask=True)
        proto = Task("test:proto", [(test_action, [self.run_id])], uptodate=[self.green_check], verbosity=0, meta={})
        # What no test task changes lives once, on a LeanTestTask subclass made for this plan; an instance holds
        # only its own parts. A test's action replaces its meta and file_dep; doit replaces, never mutates, the
        # rest (`values` it updates: each task has its own). 5,000 tasks: ~9 MB less than full Tasks.
        shared = {key: value for key, value in proto.__dict__.items() if key not in _OWN}
        test_task = type("OacTestTask", (LeanTestTask,), {"__module__": __name__, **shared,
                                                           "green_check": self.green_check})
        meta = self.task_meta
        no_files: frozenset[str] = frozenset()
        none: list[Any] = []
        after_compile = [self.compile_task]
        always_run = [(False, None, None)]  # a repeat: never green-skipped
        repeats = self.repeat_names()
        names = self.names
        for case in self.planned_cases():
            test_id = case.test_id  # (read once: a pydantic model's attribute is a slow read in 3.11)
            agent_test = case.kind == "agent"
            for name in repeats.get(test_id) or (names[test_id],):
                task = test_task.__new__(test_task)
                files = self.file_dep(test_id)
                task.__dict__.update(name=name, meta=meta, values={})  # (its doc: made when asked)
                if name in self.repeat_of:
                    task.uptodate = always_run
                if files:  # doit may add implicit task_dep to a task whose file_dep another task makes
                    task.file_dep = set(files)
                    task.task_dep = [self.compile_task] if agent_test else []
                else:
                    task.file_dep = no_files
                    task.task_dep = after_compile if agent_test else none
                group.task_dep.append(name)
                yield task
        # The group last: doit's dispatcher then makes each test's node when the test's turn comes (the group
        # first made all 5,000 nodes and their generators up front); the tests run in the same order.
        yield group

    def repeat_names(self) -> dict[str, list[str]]:
        """test id → the task names of its repeats, in repeat order (empty without --repeat)."""
        found: dict[str, list[str]] = {}
        for name, index in self.repeat_of.items():
            found.setdefault(self.test_ids[name], []).append(name)
        return found

    def _start_prefetch(self) -> None:
        """Start the real handlers of the tests that will run (not green, not ignored) ahead of their turn."""
        manager = Globals.dep_manager
        pending = []
        for case in self.planned_cases() if self.repeat == 1 else ():
            if case.kind != "tool":
                continue
            name = self.names[case.test_id]
            if not self.options.force and self.green_at(name, case.test_id) is not None:
                continue
            if manager is not None and manager.status_is_ignore(_Named(name)):
                continue
            from open_agent_compiler.testing.runner import handler_call

            call = handler_call(case, self.resolved, self.settings)
            if call:
                pending.append((case.test_id, partial(start_handler, **call)))
        self.prefetch = HandlerPrefetch(pending)

    def file_dep(self, test_id: str) -> list[str]:
        """The files a test's key covers (only tests keyed afresh have any: cached keys cover no file)."""
        files = self.keyer.files_of(test_id)
        if not files:
            return []
        root = self.root
        return [discovered_path(root, label) for label, found in files.items()
                if found != "missing" and not label.startswith(("module ", "inputs ")) and not label.endswith("/")
                and not label.startswith(("stat:", "link:")) and not found.startswith(("stat:", "link:", "changed "))]

    def model_name(self, case: TestCase) -> str | None:
        """The model of the agent a test runs on (its record's `model`), once per slot: `resolved` is frozen."""
        if case.slot is None:
            return None
        names = self.__dict__.setdefault("_model_names", {})
        if case.slot not in names:
            params = self.resolved.agent(case.slot).model_parameters
            names[case.slot] = params.model_name if params else None
        return names[case.slot]


# What each test task holds itself; everything else of the prototype lives on the plan's task class.
_OWN = frozenset(("name", "doc", "meta", "values", "file_dep", "task_dep", "uptodate"))
# What a test task doit is done with still holds (see `LeanTestTask.release`).
_KEPT = ("name", "doc", "file_dep", "task_dep", "_uptodate")
# What doit's `pickle_safe_dict` leaves out (the rest goes to -n workers).
_NOT_SENT = frozenset(("_actions", "_action_instances", "clean_actions", "teardown", "custom_title", "value_savers",
                       "uptodate", "_uptodate"))


class GreenFlag:
    """A test task's `uptodate` in doit's value form: doit takes a non-callable entry as the answer and tests
    its truth when it checks the task, which asks the plan's `GreenCheck` then. As a callable, doit ran
    `inspect.signature` on it for every task and every run (~5 µs idle, ~17 µs on a loaded machine: about a
    fifth of doit's whole per-task cost in a warm run)."""

    __slots__ = ("check", "task")

    def __init__(self, check: GreenCheck, task: Any) -> None:
        self.check = check
        self.task = task

    def __bool__(self) -> bool:
        return self.check(self.task)

    def __repr__(self) -> str:  # what `doit info` prints when the check fails
        return repr(self.check)


class TestAction(PythonAction):
    """A test task's action: a doit PythonAction that doit executes like any other (output capture, return value
    checks, values). doit's `_prepare_kwargs` inspects the callable's signature and binds its arguments before
    every call (~35 µs of a cold test's ~64 µs in doit); ours always takes `(run_id, task)`, so `task` is given
    at once. Built without PythonAction.__init__'s checks of a callable that is always `test_action`."""

    def __init__(self, py_callable: Any, args: list[Any], task: Any) -> None:  # noqa: D107 - no super(): see above
        self.py_callable = py_callable
        self.args = args
        self.kwargs = {}
        self.task = task
        self.out = None
        self.err = None
        self.result = None
        self.values = {}

    def _prepare_kwargs(self) -> dict[str, Any]:
        return {"task": self.task}


class LeanTestTask(Task):
    """doit's Task, with the per-task work a test task never needs taken out of doit's path:
    - `init_options`: a test task has no parameters, so its options are `{}` without building a command-line
      parser per task (what doit's parse of an empty command line gives; with arguments, doit's own code);
    - `actions`: one `TestAction` per action, not `create_action`'s checks;
    - `pickle_safe_dict`: what doit sends to a `-n` worker, from the instance's own keys (doit `del`s keys that
      here live on the class).
    A done test's action instances are let go by the reporter (`release`)."""

    __test__ = False
    values: Any = MappingProxyType({})  # a released task's (doit does not read them again); a new task has its own

    def init_options(self, args: Any = None) -> Any:
        if self.options is None and not args and not self.params and not self.creator_params:
            self.options = {}
            return args
        return super().init_options(args)

    @property
    def actions(self) -> list[Any]:
        if self._action_instances is None:
            self._action_instances = [TestAction(action[0], action[1], self) for action in self._actions]
        return self._action_instances

    green_check: GreenCheck  # the plan's, on the plan's task class

    @property  # type: ignore[override]
    def doc(self) -> str:
        """What `doit list` and `doit info` say of the test, made when asked (held per task, 5,000 of them were
        0.46 MB of a cold run)."""
        own = self.__dict__.get("doc")
        if own is not None:
            return own
        plan = self.green_check.plan
        case = plan.by_id[plan.test_ids[self.name]]
        return f"{case.kind} test {case.name!r} on {case.target_name!r}"

    @doc.setter
    def doc(self, value: str) -> None:
        self.__dict__["doc"] = value

    @property  # type: ignore[override]
    def uptodate(self) -> list[Any]:
        """doit reads it once per check: the green flag, made when asked (a repeat's own list: never green)."""
        own = self.__dict__.get("_uptodate")
        return own if own is not None else [(GreenFlag(self.green_check, self), (), {})]

    @uptodate.setter
    def uptodate(self, value: list[Any]) -> None:
        self.__dict__["_uptodate"] = value

    def pickle_safe_dict(self) -> dict[str, Any]:
        return {key: value for key, value in self.__dict__.items() if key not in _NOT_SENT}

    def conclude(self) -> Any:
        """In doit's main process, a test a `-n` worker ran (`tasks.parallel.main_concludes`): its action's rest
        (the key over the imports it found, the record, the values), before doit saves it. None if there was none."""
        if "oac_ran" not in self.meta:
            return None
        function, args = self._actions[0]
        return function(*args, task=self)

    def release(self, meta: dict[str, Any] | None = None) -> None:
        """A test doit is done with (saved and reported, or skipped as up to date): keep only what doit's
        dispatcher still reads (its name and deps) and the meta (the plan's shared one once given back). The
        rest, its action (captured output, values), its values, options and the state doit set while running it,
        falls back to the class's defaults; the instance's dict is rebuilt, because a dict never shrinks."""
        own = self.__dict__
        kept = {key: own[key] for key in _KEPT if key in own}
        kept["meta"] = own["meta"] if meta is None else meta
        self.__dict__ = kept


class _Named:
    def __init__(self, name: str) -> None:
        self.name = name


def plan_for(run_id: str) -> TestPlan:
    return _PLANS[run_id]


def active_plans() -> list[TestPlan]:
    return list(_PLANS.values())


def retire(run_id: str) -> None:
    """Forget a finished run, so a later run in the same process reports only its own tests; kill handlers
    started early for tests that did not get to run."""
    plan = _PLANS.pop(run_id, None)
    if plan is not None:
        plan.prefetch.close()


# actions: module-level so that doit's process pool can run them ---------------------------------------------
def compile_action(run_id: str, task: Any) -> None | TaskFailed:
    plan = plan_for(run_id)
    previous = Globals.dep_manager.get_values(task.name).get("files", {}) if Globals.dep_manager else {}
    try:
        task.values["files"] = sync_build(plan.compiled.contents, plan.options.build_dir, previous)
    except OSError as exc:  # one line naming the culprit; the tests that depend on this task say it too
        plan.compile_error = f"cannot write {exc.filename or plan.options.build_dir}: {exc.strerror or exc}"
        return TaskFailed(plan.compile_error)
    except OacError as exc:  # fsio refused a path (a directory or link in the way): its line names it
        plan.compile_error = str(exc)
        return TaskFailed(plan.compile_error)
    task.values["compiled"] = plan.compiled.key
    return None


# The test runner and the handlers are imported when a test runs (see `TestPlan.settings`); these module-level
# names stay the seams to them (tests and the phase timer wrap them).
def run_case(*args: Any, **kwargs: Any) -> TestOutcome:
    from open_agent_compiler.testing.runner import run_case as run

    return run(*args, **kwargs)


def start_handler(**call: Any) -> Any:
    from open_agent_compiler.execution.handlers import start_handler as start

    return start(**call)


def _run(plan: TestPlan, case: TestCase) -> tuple[TestOutcome, list[str]]:
    """The test's outcome, and the project files it loaded (handler / mock imports), relative to the root."""
    started = time.perf_counter()
    started_handler = plan.prefetch.take(case.test_id)
    plan.prefetch.top_up()  # the next tests' handlers start while this one runs
    with project_imports.tracking(one_test=True) as loaded:
        try:
            outcome = run_case(case, plan.resolved, plan.settings, plan.compiled.artifact_paths.get(case.target_name, ()),
                               started_handler, artifacts=plan.compiled.artifacts(case.target_name))
        except Exception as exc:  # noqa: BLE001 - one broken test must not stop the run
            outcome = TestOutcome(status="fail", score=0.0, skip_reason=f"internal error: {type(exc).__name__}: {exc}",
                                  duration_s=time.perf_counter() - started)
        except BaseException as exc:  # SystemExit / KeyboardInterrupt from user code in this process
            if isinstance(exc, KeyboardInterrupt):
                raise
            outcome = TestOutcome(status="fail", score=0.0,
                                  skip_reason=f"user code raised {type(exc).__name__}: {exc}",
                                  duration_s=time.perf_counter() - started)
    loaded.update(_mock_modules(plan, case))  # imported before (e.g. by the registry): its recorded edges count
    root = plan.root
    found = project_imports.files_of(loaded)
    if not found:  # (most tests: no project file; nothing to check)
        return outcome, []
    changed = reads.changed_since_read([path for path in found if not path.endswith(("/", LINK_MARK, STAT_MARK))])
    return outcome, [_relative(path, root) for path in found + [path + CHANGED_MARK for path in changed]]


def _mock_modules(plan: TestPlan, case: TestCase) -> set[str]:
    """Modules of the callable mocks a test can call."""
    if case.kind == "tool" and case.tool is not None:
        tools = [case.tool]
    elif case.kind == "agent" and case.slot is not None:
        tools = [reachable.tool for reachable in plan.resolved.agent(case.slot).tools]
    else:
        return set()
    profile = plan.resolved.mock_profiles.get(case.mock_profile) if case.mock_profile else None
    return {spec.partition(":")[0] for tool in tools
            for spec in callable_specs(resolve_mock(tool.name, tool.mock, profile)[0])}


def _relative(path: str, root: Path) -> str:
    """Relative to the root; a folder whose listing was read keeps its trailing "/". Sliced as text where that is
    what `Path.relative_to` gives (a normalised path under the root: what the read tracker records)."""
    base = str(root)
    prefix = base if base.endswith("/") else base + "/"
    if os.sep == "/" and path.startswith(prefix) and plain_relative(path[len(prefix):].rstrip("/")):
        return path[len(prefix):]
    try:
        relative = Path(path).relative_to(root).as_posix()
    except ValueError:
        return path
    return relative + "/" if path.endswith("/") else relative


def test_action(run_id: str, task: Any) -> None | TaskFailed:
    plan = plan_for(run_id)
    test_id = plan.test_ids[task.name]
    case = plan.by_id[test_id]
    ran = task.meta.pop("oac_ran", None)  # -n: run by a worker, concluded here in the main process (`conclude`)
    if ran is None:
        outcome, imports = _run(plan, case)
        if main_concludes():  # a -n worker: the key, the record and the values are the main process's work
            task.meta = {**task.meta, "oac_ran": (outcome, imports, now_iso())}
            return None
    else:
        outcome, imports = ran[0], ran[1]
    repeat = plan.repeat_of.get(task.name)
    planned = plan.keys[test_id]
    plan.adopt_imports(test_id, imports)
    if plan.keys[test_id] != planned:  # keyed again over what it loaded: no file only the planned key covered
        task.file_dep = set(plan.file_dep(test_id))  # stays a dep (doit would run it again for a removed one)
    if imports:  # they are file_dep from now on (doit saves their state after we return; -n: sent back with us)
        found = (discovered_path(plan.root, path) for path in imports if not path.endswith("/"))  # a folder: key only
        task.file_dep = {*task.file_dep, *(path for path in found if os.path.isfile(path))}
    finished = now_iso() if ran is None else ran[2]
    parts = plan.keyer.view_of(test_id)  # (after `adopt_imports`: the parts of the key saved below)
    # The record is durable before doit can save this test as green (it does that after we return).
    try:
        append_record(plan, build_record(plan, test_id, outcome, finished, repeat=repeat, parts=parts))
    except ResultsError as exc:  # no record, no green: the run stops here with one line (exit 2)
        raise ResultsLogLost(str(exc)) from None
    # a task's own meta from here on (test tasks start out sharing their plan's): back to doit's main process
    task.meta = {**task.meta, "oac_outcome": outcome, "oac_finished": finished, "oac_recorded": True}
    if outcome.status == "fail":
        return TaskFailed(outcome.first_failure())
    if repeat is not None:  # a repeat proves nothing green on its own: the next run runs the test again
        return None
    # Saved by doit as the task's values (returning them would store them a second time as its result).
    task.values.update({"key": plan.keys[test_id], "status": outcome.status, "at": finished,
                        "duration_s": round(outcome.duration_s, 6), "parts": parts})
    if imports:
        task.values["imports"] = imports
    if plan.scopes is not None and not parts["files"] and test_id in plan.scopes:  # shared: its key is its scope's
        task.values["scope"] = plan.scopes[test_id]
    return None


# doit inspects an action's signature before every call (5,000 times in a 5,000-test run); inspect returns a
# stored `__signature__` at once.
for _action in (compile_action, test_action):
    _action.__signature__ = inspect.signature(_action)  # type: ignore[attr-defined]
