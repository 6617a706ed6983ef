"""Standard output that a closed pipe cannot break: `oac test | head -1` ends quietly.

Every write is made terminal-safe first (control characters shown as escapes, `testing.xml_text.terminal_safe`).
When the reader goes away, stdout is pointed at /dev/null and the run goes on to its end, so every test that
was started is still recorded and the exit code is the run's own (0, 1, 2 or 130), never a traceback.
"""

import io
import os
import sys
from typing import Any, TextIO

from open_agent_compiler.testing.xml_text import terminal_safe


class QuietPipe(io.TextIOBase):
    """A text stream forwarding to `stream`; on EPIPE it swaps the file descriptor for /dev/null."""

    def __init__(self, stream: TextIO) -> None:
        super().__init__()
        self._stream = stream
        self.broken = False
        self.failure: OSError | None = None  # a write error other than a closed pipe (e.g. a full disk)

    def _lost_reader(self, error: OSError | None = None) -> None:
        self.broken = True
        if error is not None and not isinstance(error, BrokenPipeError) and self.failure is None:
            self.failure = error
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, self._stream.fileno())
            os.close(devnull)
        except (OSError, ValueError, io.UnsupportedOperation):
            self._stream = open(os.devnull, "w")  # noqa: SIM115 - lives as long as the process

    def write(self, text: str) -> int:
        if self.broken and self._stream.closed:
            return len(text)
        try:
            self._stream.write(terminal_safe(text))  # no ESC or CR of user text reaches the terminal raw
            return len(text)
        except OSError as error:
            self._lost_reader(error)
            return len(text)

    def flush(self) -> None:
        try:
            self._stream.flush()
        except OSError as error:
            self._lost_reader(error)
            try:
                self._stream.flush()  # the buffered rest now goes to /dev/null
            except OSError:
                pass

    def fileno(self) -> int:
        return self._stream.fileno()

    def isatty(self) -> bool:
        return self._stream.isatty()

    def writable(self) -> bool:
        return True

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return self._stream.encoding

    @property
    def errors(self) -> str | None:  # type: ignore[override]
        return self._stream.errors

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def stream_failure() -> str | None:
    """One line for the first write error on stdout/stderr other than a closed pipe, else None."""
    for name, stream in (("standard output", sys.stdout), ("standard error", sys.stderr)):
        if isinstance(stream, QuietPipe) and stream.failure is not None:
            return f"cannot write {name}: {stream.failure.strerror or stream.failure}"
    return None


def guard_standard_streams() -> None:
    """Install QuietPipe on stdout and stderr (once); text they cannot encode (a lone surrogate in evidence)
    is written as a backslash escape instead of raising."""
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            reconfigure(errors="backslashreplace")
    if not isinstance(sys.stdout, QuietPipe):
        sys.stdout = QuietPipe(sys.stdout)
    if not isinstance(sys.stderr, QuietPipe):
        sys.stderr = QuietPipe(sys.stderr)
