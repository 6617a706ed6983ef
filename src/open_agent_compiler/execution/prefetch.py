"""Start the real handlers of upcoming tests before their turn, a few at a time.

A handler runs in its own forked process (~5 ms each: fork, loading the script, building its pydantic
classes, exit) while the run itself waits. In a serial run the next tests' handlers can start early on
another core while the main process works through the tests before them; when a test's turn comes its handler
has usually finished. Only the process that planned the run prefetches, in its main thread: under doit's
`-n` the tests run in workers, each with a copy of the plan, which must not start the same handler twice.
"""

import os
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # a run whose tests are all green starts no handler and does not import them
    from open_agent_compiler.execution.handlers import StartedHandler

AHEAD = 2  # handlers started before their turn, at most


class HandlerPrefetch:
    def __init__(self, upcoming: list[tuple[str, Callable[[], "StartedHandler"]]], ahead: int = AHEAD) -> None:
        self._upcoming = dict(upcoming)  # test id → how to start its handler, in the order tests will run
        self._started: dict[str, StartedHandler] = {}
        self._ahead = ahead
        self._owner = (os.getpid(), threading.main_thread())

    def _active(self) -> bool:
        return (os.getpid(), threading.current_thread()) == self._owner

    def top_up(self) -> None:
        """Drain the pipes of started handlers and start the next ones, up to `ahead` not yet taken."""
        if not self._active():
            return
        for started in self._started.values():
            started.pump()
        while self._upcoming and len(self._started) < self._ahead:
            test_id = next(iter(self._upcoming))
            self._started[test_id] = self._upcoming.pop(test_id)()

    def take(self, test_id: str) -> "StartedHandler | None":
        """This test's handler if it was started early; a test not started yet will not be started later."""
        if not self._active():
            return None
        self._upcoming.pop(test_id, None)
        return self._started.pop(test_id, None)

    def close(self) -> None:
        """Kill handlers whose tests will not run (an interrupted run)."""
        if not self._active():
            return
        for started in self._started.values():
            started.cancel()
        self._started.clear()
        self._upcoming.clear()
