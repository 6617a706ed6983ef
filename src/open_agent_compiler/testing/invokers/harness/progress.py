"""Per-turn progress of a harness agent test on a terminal: a real harness takes seconds per turn, so each turn
says where the test is (turn, tool calls so far, elapsed). Nothing is printed when stderr is not a TTY."""

import sys
import time
from typing import TextIO

from open_agent_compiler.testing.invokers.protocol import InvokerSession, ToolDispatcher, TurnResult


def progress_stream() -> TextIO | None:
    """stderr when it is a terminal, else None (no progress)."""
    try:
        return sys.stderr if sys.stderr.isatty() else None
    except (AttributeError, ValueError):
        return None


class ProgressSession:
    """Wraps a harness session: one line when a turn starts and one when it ends, on `stream`."""

    def __init__(self, inner: InvokerSession, stream: TextIO, label: str, turns: int,
                 dispatcher: ToolDispatcher) -> None:
        self.inner, self.stream, self.label, self.turns, self.dispatcher = inner, stream, label, turns, dispatcher
        self.started = time.monotonic()

    def _say(self, index: int, what: str) -> None:
        calls = len(self.dispatcher.log)
        self.stream.write(f"  {self.label} turn {index}/{self.turns} {what}: {calls} tool call"
                          f"{'' if calls == 1 else 's'} so far, {time.monotonic() - self.started:.1f}s\n")
        self.stream.flush()

    def turn(self, index: int, prompt: str) -> TurnResult:
        self._say(index, "running")
        result = self.inner.turn(index, prompt)
        self._say(index, "done")
        return result
