"""`session_turn`: how a harness run becomes one turn, or the one-line error of the test that ran it."""

import sys
from pathlib import Path

import pytest

from open_agent_compiler.testing.invokers.harness.base import Scratch, session_turn
from open_agent_compiler.testing.invokers.protocol import CompiledAgent, Deadline, InvokerError


class FakeServer:
    """The parts of the scripted model server a turn uses."""

    def __init__(self) -> None:
        self.errors: list[str] = []
        self.ended: list[str] = []

    def resolve_command(self, command: str) -> tuple[str | None, dict]:
        return None, {}

    def end_turn(self, text: str) -> None:
        self.ended.append(text)


def parse(stdout: str, resolve) -> tuple:
    """Events as `session:<id>` / `text:<t>` / `error:<e>` lines."""
    fields = dict(line.split(":", 1) for line in stdout.splitlines() if ":" in line)
    return fields.get("session"), fields.get("text", ""), [], [], fields.get("error", "")


@pytest.fixture
def scratch(tmp_path: Path):
    (tmp_path / "build").mkdir()
    made = Scratch(CompiledAgent(dialect="opencode", build_dir=tmp_path / "build", project_root=tmp_path,
                                 slot="primary", compiled_name="primary"))
    yield made
    made.remove()


def turn(scratch: Scratch, server: FakeServer, script: str):
    return session_turn(server, [sys.executable, "-c", script], scratch, {}, Deadline(30), "fake, turn 1", [],
                        parse, "fake run")


def test_a_turn_gives_its_session_and_text(scratch: Scratch) -> None:
    server = FakeServer()
    session, result = turn(scratch, server, "print('session:s1'); print('text:hello')")
    assert session == "s1" and result.text == "hello" and server.ended == ["hello"]


@pytest.mark.parametrize("script, expected", [
    ("import sys; print('session:s1'); sys.stderr.write('boom'); sys.exit(3)", "fake run exited 3: boom"),
    ("print('session:s1'); print('error:model refused')", "fake run exited 0: model refused"),
    ("print('text:no session')", "fake run exited 0: "),
])
def test_a_failed_turn_is_one_error_naming_the_command(scratch: Scratch, script: str, expected: str) -> None:
    server = FakeServer()
    with pytest.raises(InvokerError) as failed:
        turn(scratch, server, script)
    assert str(failed.value).startswith(expected) and server.ended == []


def test_a_build_missing_since_its_compile_is_one_line_and_leaves_no_scratch(tmp_path: Path) -> None:
    agent = CompiledAgent(dialect="opencode", build_dir=tmp_path / ".oac" / "build" / "gone", project_root=tmp_path,
                          slot="primary", compiled_name="primary")
    with pytest.raises(InvokerError) as failed:
        Scratch(agent)
    assert str(failed.value).startswith(f"cannot copy the build {tmp_path / '.oac' / 'build' / 'gone'}: ")
    assert "\n" not in str(failed.value) and "FileNotFoundError" not in str(failed.value)
    assert not list((tmp_path / ".oac" / "procs").iterdir())  # its pid file went with it
