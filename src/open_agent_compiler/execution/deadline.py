"""The one deadline: a wall-clock end for a whole operation, enforced from outside the code that may block.

`Deadline.run(fn)` runs `fn` in a daemon thread and waits for it at most until the deadline. The caller, not the
blocked code, decides: at the deadline it raises `TimedOut` ("timed out after Ns") and the run goes on; the
thread is abandoned (Python code cannot be killed, only left behind — it dies with the process). What a blocked
operation started outside this process registers a *stopper* with `on_expiry` (a harness's keeper, a handler's
lifeline): at the deadline the stoppers run, so the processes end too, and the abandoned thread wakes up.
A thread whose `fn` ended waits for the next one (`_Carrier`): no thread is started per call.

Used by every test (the test's `timeout_s` / `--timeout` around everything it runs: mocks, scripts, evaluators,
judges, invokers), by the HTTP judge (its `timeout` around the whole request), by harness turns and by the
engine's wait for a handler's keeper.
"""

import contextlib
import os
import threading
import time
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")

_current = threading.local()


SETTLE = 2.0  # seconds the stopped operation may take to end on its own and say what it was doing


class TimedOut(Exception):
    """The deadline passed; the message is `timed out after Ns` (plus what was running). `late`: the operation's
    own outcome when it ended within `SETTLE` seconds after its stoppers ran ((True, result) or (False, error)) —
    a caller may prefer a late *failure*'s words (e.g. which harness turn hung); a late result is never a pass."""

    late: tuple[bool, object] | None = None


class Deadline:
    error: type[Exception] = TimedOut  # what `check` and `run` raise (invokers raise their own subclass)

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self._end = time.monotonic() + seconds
        self._lock = threading.Lock()
        self._stoppers: list[Callable[[], None]] = []
        self._expired = False
        self._stoppers_ran = False  # something started outside this process was stopped: it may settle

    # the clock -----------------------------------------------------------------------------------------------
    def remaining(self) -> float:
        return max(0.0, self._end - time.monotonic())

    def passed(self) -> bool:
        return self._expired or self.remaining() <= 0

    def message(self, what: str = "") -> str:
        return f"timed out after {self.seconds:g}s" + (f" ({what})" if what else "")

    def check(self, what: str = "") -> None:
        if self.passed():
            raise self.error(self.message(what))

    # what runs under it --------------------------------------------------------------------------------------
    def on_expiry(self, stopper: Callable[[], None]) -> Callable[[], None]:
        """Run `stopper` when the deadline passes (at once if it has); returns a function that unregisters it."""
        with self._lock:
            expired = self._expired
            if not expired:
                self._stoppers.append(stopper)
        if expired:
            _quietly(stopper)

        def forget() -> None:
            with self._lock:
                with contextlib.suppress(ValueError):
                    self._stoppers.remove(stopper)
        return forget

    def expire(self) -> None:
        """The deadline passed: stop what registered (once)."""
        with self._lock:
            stoppers, self._stoppers = self._stoppers, []
            self._expired = True
            self._stoppers_ran = self._stoppers_ran or bool(stoppers)
        for stopper in stoppers:
            _quietly(stopper)

    def run(self, function: Callable[..., T], *args: Any, what: str = "") -> T:
        """`function(*args)` bounded by this deadline: its result or exception (any BaseException, re-raised
        here), or `self.error` at the deadline, after the stoppers ran and with the thread abandoned."""
        outcome: list[Any] = []
        done = threading.Event()
        outer = tuple(getattr(_current, "stack", ()))  # deadlines the caller runs under also bound the worker

        def body() -> None:
            _current.stack = [*outer, self]
            try:
                outcome.append((True, function(*args)))
            except BaseException as exc:  # noqa: BLE001 - handed to the caller, who decides
                outcome.append((False, exc))
            finally:
                _current.stack = []

        _Carrier.take().carry(body, done, f"oac-deadline-{what or 'run'}")
        if getattr(_current, "meanwhile", None):
            _do_meanwhile()
        if not done.wait(self.remaining()) and not done.is_set():
            self.expire()
            timed_out = self.error(self.message(what))
            if done.wait(SETTLE if self._stoppers_ran else 0.0):
                timed_out.late = outcome[0]  # type: ignore[attr-defined]
            raise timed_out
        ok, value = outcome[0]
        if ok:
            return value  # type: ignore[no-any-return]
        raise value


class _Carrier:
    """The thread a `Deadline.run` body runs in: a daemon thread that, once its body has ended, waits for the
    next one instead of ending (a thread started per call cost ~0.5 ms of CPU and a thread switch per test).
    A body still running at its deadline keeps its carrier (abandoned with it); the carrier comes back only
    if the body ends after all. Idle carriers belong to the process that started them: a forked child starts
    its own (`os.register_at_fork` below)."""

    _idle: list["_Carrier"] = []

    def __init__(self) -> None:
        self._ready = threading.Lock()
        self._ready.acquire()  # released by `carry`: a body to run
        self._body: Callable[[], None] | None = None
        self._done: threading.Event | None = None
        self._thread = threading.Thread(target=self._serve, name="oac-deadline-run", daemon=True)
        self._thread.start()

    @classmethod
    def take(cls) -> "_Carrier":
        try:
            return cls._idle.pop()
        except IndexError:
            return cls()

    def carry(self, body: Callable[[], None], done: threading.Event, name: str) -> None:
        self._body, self._done = body, done
        self._thread.name = name
        self._ready.release()

    def _serve(self) -> None:
        while True:
            self._ready.acquire()
            body, done = self._body, self._done
            self._body = self._done = None
            assert body is not None and done is not None
            body()  # (catches everything: the outcome is the caller's)
            del body
            self._idle.append(self)  # free for the next body before the caller hears that this one ended
            done.set()

    @classmethod
    def forget_all(cls) -> None:
        cls._idle = []


os.register_at_fork(after_in_child=_Carrier.forget_all)


def meanwhile(work: Callable[[], None]) -> None:
    """Have the calling thread do `work` during its next `Deadline.run`, once the body has been handed off (a
    `-n` worker writes the last test's result while the next test runs, instead of before it starts). `work`
    must not raise. What no run picked up is the caller's to do (`_do_meanwhile`, or its own call)."""
    pending = getattr(_current, "meanwhile", None)
    if pending is None:
        pending = _current.meanwhile = []
    pending.append(work)


def _do_meanwhile() -> None:
    pending = _current.meanwhile
    while pending:
        pending.pop(0)()


def waiting() -> None:
    """The calling thread is about to wait for a test's body outside `Deadline.run` (a handler's process): the
    work `meanwhile` left is done now (a `-n` worker's last result must not wait behind a hung handler)."""
    if getattr(_current, "meanwhile", None):
        _do_meanwhile()


def current() -> Deadline | None:
    """The innermost deadline the calling thread runs under (None outside any)."""
    stack = getattr(_current, "stack", ())
    return stack[-1] if stack else None


def stop_at_deadline(stopper: Callable[[], None]) -> Callable[[], None]:
    """Register `stopper` with every deadline the calling thread runs under; returns the unregistering function."""
    forgets = [deadline.on_expiry(stopper) for deadline in getattr(_current, "stack", ())]

    def forget() -> None:
        for undo in forgets:
            undo()
    return forget


def _quietly(stopper: Callable[[], None]) -> None:
    with contextlib.suppress(Exception):
        stopper()
