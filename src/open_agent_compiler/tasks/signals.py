"""How `oac test` ends when it is told to stop: SIGINT (Ctrl-C), SIGTERM and SIGHUP are one orderly interrupt.

The first of them raises `Interrupted` in the main thread (a KeyboardInterrupt, so doit stops and saves what
finished as it does for Ctrl-C); later ones are ignored until the run has cleaned up: handlers killed, the
summary printed once, JUnit written. The exit code is 128 + the signal's number (130 for Ctrl-C).

doit's `-n` workers are forked copies of the engine: in them the signals keep their default action (the
engine stops them with SIGTERM) and Ctrl-C is left to the engine; they die with the engine if it is killed,
so the handlers they started (whose lifelines they hold) are killed too.
"""

import multiprocessing.util
import signal
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType
from typing import TYPE_CHECKING

from open_agent_compiler.execution import process_tree

if TYPE_CHECKING:
    from open_agent_compiler.tasks.reporter import OacReporter
    from open_agent_compiler.tasks.settings import TestOptions

SIGNALS = tuple(getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, name))


class Interrupted(KeyboardInterrupt):
    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


class InterruptState:
    """What stopped the run, if anything."""

    def __init__(self) -> None:
        self.signum: int | None = None
        self.held = 0  # inside `uninterrupted` blocks: the interrupt waits for their end
        self.pending = False

    @property
    def exit_code(self) -> int:
        return 128 + (self.signum or signal.SIGINT)

    @property
    def name(self) -> str:
        return signal.Signals(self.signum or signal.SIGINT).name

    def __call__(self, signum: int, frame: FrameType | None) -> None:
        if self.signum is not None:
            return  # already stopping: let the cleanup finish
        self.signum = signum
        if self.held:
            self.pending = True
            return
        raise Interrupted(signum)


_current: list[InterruptState] = []  # the run's, while `orderly_interrupts` is installed


@contextmanager
def uninterrupted() -> Iterator[None]:
    """A block an interrupt must not cut in two (a worker's message half read from its pipe): a signal that
    arrives meanwhile is raised at the block's end."""
    state = _current[-1] if _current else None
    if state is None:
        yield
        return
    state.held += 1
    try:
        yield
    finally:
        state.held -= 1
        if not state.held and state.pending:
            state.pending = False
            raise Interrupted(state.signum or signal.SIGINT)


@contextmanager
def orderly_interrupts() -> Iterator[InterruptState]:
    """Install the handlers for the run (main thread only; elsewhere signals stay as they are)."""
    state = InterruptState()
    if threading.current_thread() is not threading.main_thread():
        yield state
        return
    previous = {signum: signal.signal(signum, state) for signum in SIGNALS}
    _current.append(state)
    try:
        yield state
    finally:
        _current.remove(state)
        for signum, handler in previous.items():
            signal.signal(signum, handler)


def _in_worker(_: object) -> None:
    """Runs in each of doit's `-n` workers right after it is forked."""
    for name in ("SIGTERM", "SIGHUP"):
        if hasattr(signal, name):
            signal.signal(getattr(signal, name), signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    process_tree.die_with_parent(signal.SIGKILL)


class _WorkerHook:
    pass


_HOOK = _WorkerHook()
multiprocessing.util.register_after_fork(_HOOK, _in_worker)


def finish_interrupted(state: InterruptState, reporter: "OacReporter", options: "TestOptions") -> int:
    """After an interrupt: kill what still runs, report once (what finished is already recorded), write JUnit."""
    from open_agent_compiler.tasks.junit import write_junit
    from open_agent_compiler.execution.handlers import cancel_all

    cancel_all()
    reporter.complete_run()  # a no-op when doit already completed the run
    tally = reporter.tally
    done = tally.passed + tally.failed + tally.skipped + tally.not_runnable
    print(f"oac: interrupted by {state.name}; {tally.discovered - done} of {tally.discovered} tests did not run",
          file=sys.stderr)
    if options.junit:
        write_junit(options.junit if options.junit.is_absolute() else options.root / options.junit, tally)
    return state.exit_code
