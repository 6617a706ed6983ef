"""Harness agent tests show per-turn progress on a terminal, and nothing elsewhere."""

import io
import sys

import pytest

from open_agent_compiler.testing.invokers.harness.progress import ProgressSession, progress_stream
from open_agent_compiler.testing.invokers.protocol import ToolDispatcher, TurnResult
from open_agent_compiler.testing.mocks import MockSession


class Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_only_on_a_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "stderr", io.StringIO())
    assert progress_stream() is None
    tty = Tty()
    monkeypatch.setattr(sys, "stderr", tty)
    assert progress_stream() is tty


def test_a_line_per_turn_start_and_end_with_calls_so_far_and_elapsed() -> None:
    dispatcher = ToolDispatcher({}, None, MockSession(), hermetic=True, timeout=1)

    class Inner:
        def turn(self, index: int, prompt: str) -> TurnResult:
            dispatcher.dispatch("x", {})  # one (unknown-tool) call per turn
            return TurnResult(text=prompt)

    out = Tty()
    session = ProgressSession(Inner(), out, "agent 't' (opencode)", 2, dispatcher)
    assert session.turn(1, "a").text == "a" and session.turn(2, "b").text == "b"
    lines = out.getvalue().splitlines()
    assert [line.split(",")[0] for line in lines] == [
        "  agent 't' (opencode) turn 1/2 running: 0 tool calls so far",
        "  agent 't' (opencode) turn 1/2 done: 1 tool call so far",
        "  agent 't' (opencode) turn 2/2 running: 1 tool call so far",
        "  agent 't' (opencode) turn 2/2 done: 2 tool calls so far",
    ]
    assert all(line.endswith("s") and line.rsplit(", ", 1)[1][:-1].replace(".", "").isdigit() for line in lines)
