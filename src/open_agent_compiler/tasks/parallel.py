"""`oac test -n N`: doit's process runner, with every worker's next job queued before the worker asks for it.

doit's MRunner hands a worker its next task only after the main process has received and recorded the
worker's last result, so each test pays a round trip through two queues and the main process (measured:
~0.45 ms per test with 10 ms tests, about 5 % of the run). Here up to `AHEAD` jobs per worker wait in the job
queue, so a worker starts its next test at once while the main process records the last one. Dispatch order,
dependencies (a capability test waits for its compile task: the dispatcher answers "hold on"), reporting and
saving all stay doit's: only the loop that feeds the queue differs. A task may leave the bookkeeping after its
action to the main process (`main_concludes`, `conclude()`: a test's key, record and values), which has time
while the workers run.

Jobs go through doit's `multiprocessing.Queue` (the main process's feeder thread writes them: a job larger than a
pipe must not block it). Results are written by each worker's own thread (`_Outbox`), a test's while the next
test runs. Round 6 had tried results written at once, before the next test (`multiprocessing.SimpleQueue`):
the job `get` fell from a median 280 µs to 55 µs, but the 10 ms busy tests ran 5 % slower (docs/performance.md,
issue 18).
"""

import contextlib
import multiprocessing
import pickle
import queue
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import GeneratorType
from typing import Any

import doit.cmd_run
from doit.exceptions import TaskError
from doit.runner import JobHold, JobTask, JobTaskPickle, MReporter, MRunner, Runner

from open_agent_compiler.tasks.gc_tuning import executing
from open_agent_compiler.tasks.lean_dispatch import lean_add_task, spent_once
from open_agent_compiler.tasks.signals import uninterrupted
from open_agent_compiler.execution.deadline import meanwhile

AHEAD = 2
INTERRUPT_GRACE_S = 1.0  # after Ctrl-C, how long a worker inside a test may take to hand in its result

_in_worker = False  # set in each worker of `PrefetchingRunner`


def main_concludes() -> bool:
    """True in a `-n` worker of ours: a task's action may leave the bookkeeping after its work to doit's main
    process, which calls the task's `conclude()` when it takes the result, before doit saves it (a test's key,
    record and values: ~0.5 ms a test off the worker's path, done while the main process waits anyway)."""
    return _in_worker


class StopWhenTold:
    """`--maxfail N` / `-x`: after each result, stop dispatching once the reporter's tally says the run stopped
    (doit's own switch, `_stop_running`, the one a failure without `--continue` sets). Tests already handed to a
    worker finish and are reported."""

    reporter: Any
    _stop_running: bool

    def select_task(self, node: Any, tasks_dict: Any) -> bool:
        """doit's selection; a test doit found up to date is done with: it lets go of the values doit just
        decoded onto it and the state of its check (5,000 green tests: ~2 MB held to the end of the run)."""
        selected = super().select_task(node, tasks_dict)  # type: ignore[misc]
        if not selected and node.run_status == "up-to-date":
            release = getattr(node.task, "release", None)
            if release is not None:
                release()
        return bool(selected)

    def execute_task(self, task: Any) -> Any:
        executing()  # the garbage collector resumes (`tasks.gc_tuning`; a -n worker: in the worker)
        return super().execute_task(task)  # type: ignore[misc]

    def run_all(self, task_dispatcher: Any) -> Any:
        lean_add_task(task_dispatcher)
        release_done_nodes(task_dispatcher)
        return super().run_all(task_dispatcher)  # type: ignore[misc]

    def process_task_result(self, node: Any, base_fail: Any) -> None:
        super().process_task_result(node, base_fail)  # type: ignore[misc]
        if getattr(getattr(self.reporter, "tally", None), "stopped", None):
            self._stop_running = True


_DONE_NODE_KEEPS = ("task", "run_status", "waiting_me", "wait_select", "generator")


def release_done_nodes(task_dispatcher: Any) -> None:
    """doit's dispatcher keeps one `ExecNode` per task to the end of the run (four sets, four lists, its
    generator: ~1.4 KB a test). Once the dispatcher has taken a finished node's result (`_update_waiting`: its
    dependents told), doit reads only its task and status again (a later dependent's `parent_status`, a `-n`
    worker's messages by task name) and steps its generator to its end (which frees the generator's frame), so
    the rest is let go: the node's dict is rebuilt with those (a dict never shrinks). A node still to be selected
    or run (status None or "run") is left whole."""
    update = task_dispatcher._update_waiting
    finishing: list[Any] = []  # released nodes whose generator doit has not stepped to its end yet

    def update_then_release(processed: Any) -> None:
        update(processed)
        if finishing:
            finishing[:] = [node for node in finishing if not _spend(node)]
        if processed is not None and processed.run_status not in (None, "run"):
            own = processed.__dict__
            processed.__dict__ = {key: own[key] for key in _DONE_NODE_KEEPS}
            processed.waiting_me = _NO_NODES
            finishing.append(processed)

    task_dispatcher._update_waiting = update_then_release


def _spend(node: Any) -> bool:
    """A finished generator still holds its frame's memory (~230 bytes a test): once doit has stepped a done
    node's generator to its end, it is swapped for one spent generator that every done node shares (stepped
    again, both stop at once). True when the node is settled (swapped, or not a generator: left alone)."""
    generator = node.generator
    if type(generator) is not GeneratorType:
        if spent_once(generator):  # (`tasks.lean_dispatch`: the 1-tuple it holds, ~100 bytes a test)
            node.generator = _SPENT
        return True
    if generator.gi_frame is not None:  # doit steps it to its end after this update
        return False
    node.generator = _SPENT
    return True


def _spent() -> Iterator[Any]:
    yield from ()


_SPENT = _spent()
next(_SPENT, None)


_NO_NODES: frozenset[Any] = frozenset()  # a done node's dependents were told: doit adds none (its status is set)


class StoppingRunner(StopWhenTold, Runner):
    pass


class StartsWhenTold:
    """A `-n` worker's reporter: doit's `MReporter`, which sends each reporter call to the main process as a
    message, except `execute_task` for a task whose start the main process's reporter does not print (every test
    without `--explain`): one message per test fewer for the worker to send and the main process to read."""

    def __init__(self, forward: Any, announces: Callable[[Any], bool]) -> None:
        self._forward = forward
        self._announces = announces

    def execute_task(self, task: Any) -> None:
        if self._announces(task):
            self._forward.execute_task(task)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._forward, name)


class PrefetchingRunner(StopWhenTold, MRunner):
    _announces: Callable[[Any], bool] | None = None  # in a worker: its forked reporter's `announces`, if any

    def execute_task_subprocess(self, job_q: Any, result_q: Any, reporter_class: Any) -> None:
        """doit's worker loop, with its messages written through an `_Outbox`: a task's result may be written
        while the next task runs."""
        global _in_worker
        _in_worker = True
        self._announces = getattr(self.reporter, "announces", None)  # (the reporter the worker forked with)
        outbox = self.result_q = _Outbox(result_q)
        self.reporter = MReporter(self, reporter_class)  # (doit's: its messages go through `self.result_q`)
        try:
            while True:
                job = outbox.next_job(job_q)
                if job is None:
                    outbox.flush()
                    self.teardown()
                    outbox.flush()
                    return
                if job.type is JobTaskPickle.type:
                    task = self.tasks[job.name]
                    task.update_from_pickle(job.task_dict)
                elif job.type is JobTask.type:
                    task = pickle.loads(job.task_pickle)
                else:  # JobHold: doit never queues one
                    continue
                result: dict[str, Any] = {"name": task.name}
                failure = self.execute_task(task)
                if failure:
                    result["failure"] = failure
                result["task"] = task.pickle_safe_dict()
                result["out"] = [action.out for action in task.actions]
                result["err"] = [action.err for action in task.actions]
                outbox.hold(result)
        except (SystemExit, KeyboardInterrupt, Exception) as exception:  # as doit's: the main process raises it
            outbox.last_words({"exit": exception.__class__, "exception": str(exception)})

    def execute_task(self, task: Any) -> Any:
        if self._announces is not None and isinstance(self.reporter, MReporter):  # doit's, set for this worker
            self.reporter = StartsWhenTold(self.reporter, self._announces)
        return super().execute_task(task)

    def _process_result(self, node: Any, task: Any, result: dict[str, Any]) -> None:
        """doit's, with the task's `conclude()` (if it has one) between taking the worker's result and saving it."""
        task.update_from_pickle(result["task"])
        for action, output in zip(task.actions, result["out"]):
            action.out = output
        for action, output in zip(task.actions, result["err"]):
            action.err = output
        failure = result.get("failure")
        conclude = getattr(task, "conclude", None)
        if failure is None and conclude is not None:
            try:
                failure = conclude()
            except Exception as exc:  # noqa: BLE001 - as doit's action would: this task errs, the run goes on
                failure = TaskError("PythonAction Error", exc)
        self.process_task_result(node, failure)

    def run_tasks(self, task_dispatcher: Any) -> None:
        result_q = multiprocessing.SimpleQueue()  # written by the workers themselves (`_Outbox`)
        job_q = self.Queue()
        self._run_tasks_init(task_dispatcher)
        slots = self.num_process * AHEAD
        in_flight = 0  # jobs queued or running whose result has not come back
        exhausted = False

        def feed(completed: Any) -> None:
            """Tell the dispatcher what completed, then queue jobs until the slots are full or none is ready."""
            nonlocal in_flight, exhausted
            while not exhausted and in_flight < slots:
                job = self.get_next_job(completed)
                completed = None
                if job is None:
                    exhausted = True
                    for _ in range(self.num_process):  # behind every queued job: each worker ends after them
                        job_q.put(None)
                elif isinstance(job, JobHold):
                    return  # nothing ready until a running task completes
                else:
                    executing()  # before the workers fork: they inherit the frozen run (`tasks.gc_tuning`)
                    job_q.put(job)
                    in_flight += 1

        feed(None)
        workers = []
        if in_flight:
            for _ in range(self.num_process):
                worker = self.Child(target=self.execute_task_subprocess,
                                    args=(job_q, result_q, self.reporter.__class__))
                worker.start()
                workers.append(worker)
        try:
            reader = result_q._reader
            while in_flight:
                reader.poll(None)  # an interrupt here cuts nothing in two; below, it waits for the result's record
                with uninterrupted():
                    result = result_q.get()
                    if "exit" in result:
                        raise result["exit"](result["exception"])
                    node = task_dispatcher.nodes[result["name"]]
                    if self._take(node, result):
                        in_flight -= 1
                        feed(node)
            if not exhausted:  # stopped early (a failure without --continue): release the workers
                for _ in workers:
                    job_q.put(None)
        except KeyboardInterrupt:  # Ctrl-C (`tasks.signals`): what finished on a worker is still recorded
            self._collect_finished(task_dispatcher, job_q, result_q, workers)
            for worker in workers:
                worker.terminate()
            raise
        except (SystemExit, Exception):
            for worker in workers:
                worker.terminate()
            raise
        for worker in workers:
            worker.join()
        while not result_q.empty():  # teardown messages, safe once every worker has ended
            result = result_q.get()
            getattr(self.reporter, result["reporter"])(task_dispatcher.tasks[result["name"]])


    def _collect_finished(self, task_dispatcher: Any, job_q: Any, result_q: Any, workers: list[Any]) -> None:
        """After an interrupt: no queued test starts any more; the results of tests that finished, on their way
        or held by a worker that is between tests, are taken and recorded. A worker still inside a test after
        `INTERRUPT_GRACE_S` (a hung handler) is terminated by the caller, its test unrecorded."""
        with contextlib.suppress(queue.Empty, OSError, ValueError):
            while True:
                job_q.get(block=False)
        for _ in workers:
            job_q.put(None)  # each idle worker writes what it holds and ends
        reader = result_q._reader
        deadline = time.monotonic() + INTERRUPT_GRACE_S
        while reader.poll(max(deadline - time.monotonic(), 0.0) if any(w.is_alive() for w in workers) else 0.0):
            result = result_q.get()  # (the run is stopping: a second signal is ignored, nothing to hold back)
            node = task_dispatcher.nodes.get(result.get("name"))
            if node is not None and "exit" not in result and ("reporter" in result or node.run_status in (None, "run")):
                self._take(node, result)

    def _take(self, node: Any, result: dict[str, Any]) -> bool:
        """A worker's message about `node`: a reporter call, or its result recorded (True)."""
        if "reporter" in result:
            getattr(self.reporter, result["reporter"])(node.task)
            return False
        self._process_result(node, node.task, result)
        return True


class _Outbox:
    """A worker's messages to the main process, written by the worker's own thread (no feeder thread: handing
    each message to one cost the worker a thread switch and a GIL wait on its next job). A task's result is held
    (`hold`) and written while the next task runs: the worker's thread only waits for a test's body then
    (`execution.deadline.meanwhile`). It is written first whenever anything else goes out, before the worker waits
    for a job that is not there yet (the main process may need it to dispatch one), and at the end."""

    def __init__(self, queue: Any) -> None:
        self._queue = queue
        self._held: dict[str, Any] | None = None
        self._asked = False  # a `meanwhile` is registered and has not run yet
        self._error: BaseException | None = None

    def put(self, message: dict[str, Any]) -> None:
        self.flush()
        self._queue.put(message)

    def hold(self, result: dict[str, Any]) -> None:
        self.flush()
        self._held = result
        if not self._asked:
            self._asked = True
            meanwhile(self._meanwhile)

    def flush(self) -> None:
        if self._error is not None:
            error, self._error = self._error, None
            raise error
        held, self._held = self._held, None
        if held is not None:
            self._queue.put(held)

    def next_job(self, job_q: Any) -> Any:
        if self._held is not None:
            try:
                return job_q.get(block=False)  # ready: its task runs while the held result is written
            except queue.Empty:
                self.flush()
        return job_q.get()

    def last_words(self, message: dict[str, Any]) -> None:
        try:
            self.flush()
        finally:
            self._queue.put(message)

    def _meanwhile(self) -> None:
        self._asked = False
        try:
            self.flush()
        except BaseException as exc:  # noqa: BLE001 - raised by the worker's loop, not inside a test
            self._error = exc


@contextmanager
def prefetching_runner() -> Iterator[None]:
    """doit's `run` command picks its process runner by name from `doit.cmd_run`; point it at ours for one run."""
    original, serial = doit.cmd_run.MRunner, doit.cmd_run.Runner
    doit.cmd_run.MRunner = PrefetchingRunner  # type: ignore[misc]
    doit.cmd_run.Runner = StoppingRunner  # type: ignore[misc]
    try:
        yield
    finally:
        doit.cmd_run.MRunner = original  # type: ignore[misc]
        doit.cmd_run.Runner = serial  # type: ignore[misc]
