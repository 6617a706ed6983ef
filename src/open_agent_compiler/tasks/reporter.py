"""The doit reporter: prints one line per test, appends one JSONL record per executed test as soon as it
finishes (in the main process, also under `-n`), and prints the summary."""

import sys
from typing import Any, TextIO

from doit.dependency import Dependency
from doit.exceptions import UnmetDependency
from doit.globals import Globals

from open_agent_compiler.errors import OacError
from open_agent_compiler.model.core.evaluator import EvaluatorResult
from open_agent_compiler.history.log import TestOutcome, now_iso
from open_agent_compiler.testing.xml_text import terminal_safe
from open_agent_compiler.tasks.records import append_record, build_record, close_logs
from open_agent_compiler.tasks.backend import OacStateDB
from open_agent_compiler.tasks.annotations import annotate
from open_agent_compiler.tasks.pipeline import defined_in
from open_agent_compiler.tasks.repeats import Repeats
from open_agent_compiler.tasks.tally_rows import Row, TallyRows
from open_agent_compiler.tasks.graph import TEST_GROUP, TestPlan, active_plans, plan_for, retire


class RunTally:
    """Counts and per-test outcomes of one run, for the summary, JUnit and the exit code."""

    def __init__(self) -> None:
        self.discovered = 0
        self.passed = 0
        self.failed = 0
        self.skipped = 0
        self.not_runnable = 0
        self.failures: list[tuple[str, str]] = []  # (test id, first failing evidence)
        self.rows: TallyRows | list[Row] = TallyRows()  # (test id, name, status, duration, message) per test
        self.errors: list[str] = []
        self.kinds: dict[str, str] = {}  # test id → kind, for --durations
        self.where: dict[str, tuple[str, int]] = {}  # test id → (file, line) it is defined at, when known
        self.flaky = 0
        self.repeats = False  # a --repeat run: the summary says how many were flaky
        self.flaky_as = "fail"
        self.stopped: str | None = None  # why the run stopped early (--maxfail)
        self.maxfail = 0

    def summary(self) -> str:
        return (f"oac test: discovered={self.discovered} passed={self.passed} failed={self.failed} "
                f"skipped={self.skipped} not_runnable={self.not_runnable}"
                + (f" flaky={self.flaky}" if self.repeats or self.flaky else ""))

    def slowest(self, count: int) -> list[tuple[str, str, str, float]]:
        """(test id, kind, status, seconds) of the `count` slowest tests that ran (0: all), slowest first."""
        ran = sorted((row for row in self.rows if row[3] > 0), key=lambda row: (-row[3], row[0]))
        return [(row[0], self.kinds.get(row[0], "?"), row[2], row[3]) for row in (ran[:count] if count else ran)]


def timing(kind: str, seconds: float | None) -> str:
    """The suffix every result line carries: the test's kind and how long it ran."""
    return f" [{kind}]" if seconds is None else f" [{kind} {seconds:.3f}s]"


def _dep_manager() -> Dependency | None:
    return Globals.dep_manager


def _saved_values(task_name: str) -> dict[str, Any]:
    manager = _dep_manager()
    return manager.get_values(task_name) if manager is not None else {}


def _backend() -> OacStateDB | None:
    backend = getattr(_dep_manager(), "backend", None)
    return backend if isinstance(backend, OacStateDB) else None


def _later(shared_at: str | None, local_at: str | None) -> bool:
    """Whether the shared outcome finished after the local pass (unknown times: the local one is kept)."""
    from open_agent_compiler.tasks.shared_store import finished_epoch

    shared, local = finished_epoch(shared_at), finished_epoch(local_at)
    return shared is not None and local is not None and shared > local


def _failed_last(task_name: str) -> bool:
    backend = _backend()
    return backend is not None and backend.failed_last(task_name)


def _release(task: Any, plan: TestPlan) -> None:
    """A reported test's action and own meta are not read again (see `graph.LeanTestTask.release`)."""
    release = getattr(task, "release", None)
    if release is not None:
        release(plan.task_meta)


class OacReporter:
    """doit reporter interface. Built by us for `oac test`, or by doit (class in DOIT_CONFIG) for `doit test`."""

    desc = "oac test results: lines, JSONL records, summary"

    def __init__(self, outstream: TextIO | None = None, options: dict[str, Any] | None = None) -> None:
        self.out = outstream or sys.stdout
        self.options = options or {}
        self.tally = RunTally()
        self._force = bool(self.options.get("always_execute"))
        self._plans: list[TestPlan] = []
        self._completed = False
        self._tests_selected = True
        self._repeats: Repeats | None = None
        self.keep_plans = False  # the pytest plugin runs one plan's tasks over many doit runs
        self.stoppable = False  # `oac test` runs doit with runners that stop when told (-x/--maxfail)
        self._started: Any = None  # the test task doit last started (an interrupt may land before it is reported)

    # helpers ------------------------------------------------------------------------------------------------
    @staticmethod
    def _test_info(task: Any) -> tuple[TestPlan, str] | None:
        info = (task.meta or {}).get("oac")
        if not info:
            return None
        plan = plan_for(info["run_id"])
        return plan, plan.test_ids[task.name]

    def _say(self, text: str) -> None:
        if not text.isascii():  # a lone surrogate (from a handler's output) is shown escaped, never crashes
            text = text.encode("utf-8", "backslashreplace").decode("utf-8")
        self.out.write(terminal_safe(text) + "\n")  # also under `doit test`, where stdout is doit's own
        self.out.flush()

    def _record(self, task: Any, plan: TestPlan, test_id: str, outcome: TestOutcome, finished: str,
                repeat: int | None = None) -> None:
        if task.meta.pop("oac_recorded", False):  # the action appended its own record
            return
        self._append(plan, build_record(plan, test_id, outcome, finished, repeat=repeat))

    def _append(self, plan: TestPlan, record: Any) -> None:
        try:
            append_record(plan, record)
        except OacError as exc:
            self.tally.errors.append(str(exc))
            self._say(f"  ERROR {exc}")

    def _finish_test(self, task: Any, plan: TestPlan, test_id: str, outcome: TestOutcome, finished: str) -> None:
        repeat = plan.repeat_of.get(task.name)
        if repeat is not None:
            self._record(task, plan, test_id, outcome, finished, repeat=repeat)
            if self._repeats is None:
                self._repeats = Repeats(plan.repeat, plan.options.flaky_as)
            folded = self._repeats.add(test_id, outcome)
            if folded is None:
                return
            outcome, summary, flaky = folded
            backend = _backend()
            if backend is not None and (flaky or outcome.status == "fail"):  # the test's own green goes too
                backend.mark_failed(plan.names[test_id], plan.keys[test_id], finished, outcome.duration_s)
            self._report(plan, test_id, outcome, flaky)
            self._append(plan, build_record(plan, test_id, outcome, finished, repeats=summary, flaky=flaky))
            return
        self._report(plan, test_id, outcome, False)
        self._record(task, plan, test_id, outcome, finished)

    def _report(self, plan: TestPlan, test_id: str, outcome: TestOutcome, flaky: bool) -> None:
        case = plan.by_id[test_id]
        verbose = plan.options.verbose
        tally = self.tally
        tally.kinds[test_id] = case.kind
        file, line = defined_in(case.test, plan.root)
        if file is not None and line is not None:
            tally.where[test_id] = (file, line)
        message = ""
        if flaky:
            tally.flaky += 1
            message = outcome.skip_reason or "flaky"
            if outcome.status == "fail":
                tally.failures.append((test_id, message))
            self._say(f"  FLAKY {case.name!r}: {message}{timing(case.kind, outcome.duration_s)}")
        elif outcome.status == "pass":
            tally.passed += 1
            if verbose:
                self._say(f"  pass {case.name!r}{timing(case.kind, outcome.duration_s)}")
        elif outcome.status == "fail":
            tally.failed += 1
            shown = " ".join(outcome.first_failure().split())
            tally.failures.append((test_id, shown))
            self._say(f"  FAIL {case.name!r}: {shown}{timing(case.kind, outcome.duration_s)}")
            if self.stoppable and tally.maxfail and tally.failed >= tally.maxfail:
                tally.stopped = tally.stopped or f"stopped after {tally.maxfail} failure" + \
                    ("s" if tally.maxfail > 1 else "") + f" (--maxfail {tally.maxfail})"
        elif outcome.status == "skipped":
            tally.skipped += 1
            if verbose:
                self._say(f"  skip {case.name!r}: {outcome.skip_reason}{timing(case.kind, outcome.duration_s)}")
        else:
            tally.not_runnable += 1
            if verbose:
                self._say(f"  not_runnable {case.name!r}: {outcome.skip_reason}{timing(case.kind, outcome.duration_s)}")
        tally.rows.append((test_id, case.name, "flaky" if flaky else outcome.status, outcome.duration_s,
                           message or (outcome.first_failure() if outcome.status != "pass" else "")))

    # doit's reporter interface ------------------------------------------------------------------------------
    def initialize(self, tasks: Any, selected_tasks: Any) -> None:
        self._plans = active_plans()
        for plan in self._plans:
            self.tally.repeats = self.tally.repeats or plan.repeat > 1
            self.tally.flaky_as = plan.options.flaky_as
            self.tally.maxfail = plan.options.maxfail
        self._tests_selected = any(name == TEST_GROUP or name.startswith(TEST_GROUP + ":")
                                   for name in selected_tasks or ())

    def get_status(self, task: Any) -> None:
        info = self._test_info(task)
        if info and info[0].repeat_of.get(task.name, 1) == 1:  # a test with N repeats is one test
            self.tally.discovered += 1

    @staticmethod
    def _foreign(task: Any) -> bool:
        """A task that is neither a test, our build-dir compile, nor a group: a user's or `compile` task,
        reported as doit's console reporter would."""
        meta = task.meta or {}
        return not (meta.get("oac") or meta.get("oac_compile") or task.subtask_of is None and task.has_subtask)

    def announces(self, task: Any) -> bool:
        """Whether `execute_task` prints anything for `task` (a `-n` worker tells the main process only then)."""
        if self._foreign(task) and task.actions:
            return True
        info = self._test_info(task)
        return bool(info and info[0].options.explain)

    def execute_task(self, task: Any) -> None:
        if self._foreign(task) and task.actions:
            self._say(f".  {task.title()}")
        info = self._test_info(task)
        if info:
            self._started = task
        if info and info[0].options.explain:
            plan, test_id = info
            self._say(f"  run {plan.by_id[test_id].name!r}: {self._why(task, plan, test_id)}")

    def _why(self, task: Any, plan: TestPlan, test_id: str) -> str:
        if self._force:
            return "--force"
        saved = _saved_values(task.name)
        if _failed_last(task.name):
            return "last run failed"
        backend = _backend()
        saved_parts = (backend.parts(task.name) if backend is not None else saved.get("parts")) if saved else None
        # the last key recorded for the test in the shared state, when it is newer than the local one (or the
        # local one has no parts: never ran here, or a pass adopted from the shared state)
        shared = plan.shared.last_parts(task.name) if plan.shared is not None else None
        if shared is not None and (not saved_parts or _later(shared[0], saved.get("at"))):
            at, parts = shared
            changed = plan.parts_of(test_id).changes_since(parts)
            return (f"changed since the shared run of {at}: " + ", ".join(changed) if changed
                    else f"last run failed (shared, {at})")
        if not saved:
            return "never ran"
        if saved.get("status") != "pass":
            return f"last run was {saved.get('status')}"
        changed = plan.parts_of(test_id).changes_since(saved_parts or {})
        return "changed: " + ", ".join(changed) if changed else "key changed"

    def add_success(self, task: Any) -> None:
        info = self._test_info(task)
        if info:
            outcome = task.meta.pop("oac_outcome")  # recorded below; not kept for the rest of the run
            self._finish_test(task, *info, outcome, task.meta.get("oac_finished") or now_iso())
            # doit saved them (the backend holds that dict until its next flush commits it, then lets it go)
            task.values = {}
            if task.name not in info[0].repeat_of:  # recorded and saved: its key parts are not asked for again
                info[0].keyer.forget_parts(info[1])
            _release(task, info[0])

    def add_failure(self, task: Any, exception: Any) -> None:
        info = self._test_info(task)
        if info is None and isinstance(exception, UnmetDependency):
            return  # a group (doit's `test`) whose failed members were already reported one by one
        if info is None:
            message = " ".join(str(exception.get_msg() if hasattr(exception, "get_msg") else exception).split())
            compile_info = (task.meta or {}).get("oac_compile")
            if compile_info:  # our compile task: its reason is told again in the FAIL of each test that needed it
                plan = plan_for(compile_info["run_id"])  # (also when a -n worker ran it: set here, not there)
                plan.compile_error = message = plan.compile_error or message
            self.tally.errors.append(f"{task.name}: {message}")
            self._say(f"  ERROR {task.name}: {message[:500]}")
            return
        outcome = (task.meta or {}).pop("oac_outcome", None)
        backend = _backend()
        if backend is not None:  # doit removed its green state; --explain says why it runs next time
            plan, test_id = info
            backend.mark_failed(task.name, plan.keys[test_id], task.meta.get("oac_finished") or now_iso(),
                                outcome.duration_s if outcome is not None else None,
                                plan.keyer.view_of(test_id) if backend.shared is not None else None)
        if outcome is None:  # never reached our action: a dependency failed, or doit itself refused
            text = " ".join(str(exception.get_msg() if hasattr(exception, "get_msg") else exception).split())
            if isinstance(exception, UnmetDependency) and info[0].compile_error:  # the cause, not only the task
                text = f"not run: its compile task failed: {info[0].compile_error}"
            evidence = EvaluatorResult(evaluator_kind="engine", name="engine", passed=False, score=0.0,
                                       evidence=text[:500])
            outcome = TestOutcome(status="fail", score=0.0, evidence=(evidence,))
        self._finish_test(task, *info, outcome, task.meta.get("oac_finished") or now_iso())
        _release(task, info[0])

    def skip_uptodate(self, task: Any) -> None:
        info = self._test_info(task)
        if not info:
            if self._foreign(task):
                self._say(f"-- {task.title()}")
            return
        plan, test_id = info
        self._skipped(plan, test_id, plan.green_check.last_green_at(task.name) or "an earlier run")

    def _skipped(self, plan: TestPlan, test_id: str, at: str) -> None:
        tally = self.tally
        tally.skipped += 1
        case = plan.by_id[test_id]
        name, kind = case.name, case.kind  # (each read once: a pydantic model's attribute is a slow read in 3.11)
        tally.rows.append((test_id, name, "skipped", 0.0, f"matches green run from {at}"))
        tally.kinds[test_id] = kind
        options = plan.options
        if options.shard:  # a shard's results say what became of each of its tests (see history.merge)
            self._append(plan, build_record(plan, test_id, TestOutcome(
                status="skipped", score=1.0, skip_reason=f"green: key unchanged since {at}"), now_iso()))
        if options.verbose or options.explain:
            self._say(f"  skip {name!r}: matches green run from {at}{timing(kind, None)}")

    def skip_ignore(self, task: Any) -> None:
        info = self._test_info(task)
        if info:
            self.tally.skipped += 1

    def teardown_task(self, task: Any) -> None:
        pass

    def cleanup_error(self, exception: Any) -> None:
        self._say(f"  ERROR cleanup: {exception.get_msg() if hasattr(exception, 'get_msg') else exception}")

    def runtime_error(self, msg: str) -> None:
        self.tally.errors.append(msg)
        self._say(f"oac: {' '.join(str(msg).split())[:1000]}")

    def complete_run(self) -> None:
        if self._completed:  # doit completes an interrupted run, then `oac test` finishes it: one summary
            return
        self._completed = True
        if isinstance(sys.exc_info()[1], KeyboardInterrupt):  # doit completes the run in a `finally`
            # tests the interrupt kept from being dispatched were discovered all the same
            self.tally.discovered = max(self.tally.discovered, sum(len(plan.cases) for plan in self._plans))
            started, self._started = self._started, None
            outcome = (started.meta or {}).get("oac_outcome") if started is not None else None
            if outcome is not None and outcome.status != "fail":  # it passed and was recorded; the interrupt came
                self.add_success(started)  # while doit saved it, before doit reported it
        close_logs()
        for plan in self._plans if not self.keep_plans else ():
            retire(plan.run_id)
        if self.options and self._tests_selected:  # built by doit for a dodo.py: `oac test` writes its own
            for plan in self._plans:
                if plan.options.junit_path is not None:
                    from open_agent_compiler.tasks.junit import write_junit  # (xml.etree: only when asked for)

                    write_junit(plan.options.junit_path, self.tally)
        if not self.tally.discovered and not self._tests_selected:
            return  # a doit run of other tasks only (e.g. `doit compile`): no test summary
        durations = next((plan.options.durations for plan in self._plans
                          if plan.options.durations is not None), None)
        if durations is not None:
            self._say(f"slowest {durations or 'all'} durations:")
            for test_id, kind, status, seconds in self.tally.slowest(durations):
                self._say(f"  {seconds:8.3f}s {kind:<10} {status:<12} {test_id}")
        if self.tally.stopped:
            self._say(f"oac: {self.tally.stopped}")
        annotate(self.tally, self.out)
        self._say("")
        self._say(self.tally.summary())
        if self.tally.failures:
            self._say("Failures:")
            for test_id, message in self.tally.failures:
                self._say(f"  - {test_id}: {message}")
