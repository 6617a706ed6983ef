"""The keeper: one small process per handler run that owns the handler's whole process tree.

It becomes a child subreaper (Linux), starts the handler in a process group of its own, reads its answer and
output with hard caps, and enforces the timeout. The handler's answer and the handler process's exit decide the
result — not EOF on every pipe, which a leftover child can hold open for ever. Whatever the handler leaves
behind (children, setsid'd daemons, double forks: all reparent to the keeper) is killed before the result is
sent. The engine holds the write end of a *lifeline* pipe: when it closes it (a cancelled run) or dies (kill -9
included, the kernel closes it), the keeper kills the tree at once and exits.

The result goes to the engine as one JSON document on the result pipe, followed by EOF. A handler that answered
is reported at once; what it left behind is killed right after (the engine does not wait for that teardown).

The same keeper runs a *command* (a request with `command`: a harness turn): the program is exec'd in its own
process group with its stdout/stderr going to files, and the report is its exit code. When the engine lets go
before it ends (killed, interrupted, or at the test's deadline), the keeper kills the tree and also removes the
request's `scratch` folder (a harness's HOME and config, which may hold an API key).
"""

import contextlib
import gc
import json
import os
import selectors
import shutil
import signal
import struct
import subprocess
import sys
import time
from typing import Any, NoReturn

from open_agent_compiler.execution import leftovers, process_tree

ANSWER_LIMIT = 8 << 20  # bytes of answer JSON a handler may return
OUTPUT_LIMIT = 8 << 20  # bytes a handler (and its children) may print to stdout + stderr
TAIL = 16 << 10  # bytes of output kept for evidence
STARTUP = 30.0  # seconds a fresh interpreter (spawn mode) may take to start before its timeout starts counting
READY = b"R"  # a spawned child's first byte on the answer pipe: started, the handler's timeout counts from here
FRAME = struct.Struct("<Q")  # the answer's length, before it: a complete answer is known without waiting for EOF
_CHUNK = 65536


class _Stop(Exception):
    """SIGTERM/SIGHUP reached the keeper: kill the tree, exit."""


def _stop(signum: int, frame: Any) -> None:
    raise _Stop


def run(request: dict[str, Any], lifeline_fd: int, result_fd: int) -> NoReturn:
    """Entry point in a freshly forked keeper. Never returns."""
    gc.disable()  # a short life with little garbage: collecting would only copy the zygote's pages
    try:
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)  # the zygote ignores it (auto-reap): we need waitpid
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the engine's to decide; it closes the lifeline
        signal.signal(signal.SIGTERM, _stop)
        signal.signal(signal.SIGHUP, _stop)
        devnull = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):  # hold none of the caller's terminals or pipes
            os.dup2(devnull, fd)
        os.close(devnull)
        process_tree.close_fds_except({lifeline_fd, result_fd})
        process_tree.become_subreaper()
        _Keeper(request, lifeline_fd, result_fd).run()
    except BaseException:  # noqa: BLE001 - whatever happens, nothing of the handler may outlive us
        process_tree.kill_all_descendants()
    finally:
        os._exit(0)


def _send(fd: int, result: dict[str, Any]) -> None:
    data = json.dumps(result, default=str).encode()
    view = memoryview(data)
    try:
        while view:
            view = view[os.write(fd, view):]
    except OSError:
        pass  # the engine is gone or no longer wants it


class _Keeper:
    def __init__(self, request: dict[str, Any], lifeline_fd: int, result_fd: int) -> None:
        self.request = request
        self.lifeline = lifeline_fd
        self.result_fd = result_fd
        self.answer = bytearray()
        self.tail = bytearray()
        self.output_bytes = 0
        self.overflow = ""
        self.exit_code: int | None = None
        self.pid = 0
        self.waiting_ready = False
        self.deadline = 0.0

    def _start(self, answer_w: int, output_w: int, closed_in_child: tuple[int, ...]) -> int:
        if self.request.get("command"):
            return self._exec(closed_in_child + (answer_w, output_w))
        if self.request.get("spawn"):
            return self._spawn(answer_w, output_w)
        pid = os.fork()
        if pid == 0:
            try:
                for fd in closed_in_child:
                    os.close(fd)
                os.setpgid(0, 0)
                gc.enable()  # the handler's own code collects as usual
                for signum in (signal.SIGTERM, signal.SIGHUP, signal.SIGPIPE):
                    signal.signal(signum, signal.SIG_DFL)
                signal.signal(signal.SIGINT, signal.default_int_handler)
                process_tree.die_with_parent(signal.SIGKILL)
                if self.request.get("marker"):  # what this handler starts is found by it after a kill -9 of all
                    os.environ[leftovers.MARKER] = str(self.request["marker"])
                from open_agent_compiler.execution.handler_child import serve

                serve(self.request, answer_w, output_w)
            finally:
                os._exit(1)
        try:
            os.setpgid(pid, pid)  # also from this side: no window in which killing the group would miss it
        except OSError:
            pass
        return pid

    def _exec(self, closed_in_child: tuple[int, ...]) -> int:
        """A command in a process group of its own, dying with this keeper, its output in the request's files."""
        command = self.request["command"]
        argv = [str(word) for word in command["argv"]]
        pid = os.fork()
        if pid == 0:
            try:
                for fd in closed_in_child:
                    os.close(fd)
                os.setpgid(0, 0)
                for signum in (signal.SIGTERM, signal.SIGHUP, signal.SIGPIPE, signal.SIGINT, signal.SIGCHLD):
                    signal.signal(signum, signal.SIG_DFL)
                process_tree.die_with_parent(signal.SIGKILL)
                for fd, path in ((1, command["stdout"]), (2, command["stderr"])):
                    opened = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
                    os.dup2(opened, fd)
                    os.close(opened)
                os.chdir(command["cwd"])
                os.execvpe(argv[0], argv, {str(k): str(v) for k, v in command["env"].items()})
            except BaseException as exc:  # noqa: BLE001 - whatever failed, say it where the engine reads stderr
                with contextlib.suppress(OSError):
                    os.write(2, f"cannot run {argv[0]}: {exc}\n".encode())
            finally:
                os._exit(127)
        try:
            os.setpgid(pid, pid)
        except OSError:
            pass
        return pid

    def _spawn(self, answer_w: int, output_w: int) -> int:
        """A fresh interpreter (OAC_HANDLER_SPAWN=1): same pipes, the answer pipe passed by number."""
        env = dict(os.environ)
        root = str(self.request["project_root"])
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [root, env.get("PYTHONPATH")]))
        if self.request.get("marker"):
            env[leftovers.MARKER] = str(self.request["marker"])
        child = subprocess.Popen(
            [sys.executable, "-m", "open_agent_compiler.execution.handler_child", "--answer-fd", str(answer_w)],
            stdin=subprocess.PIPE, stdout=output_w, stderr=output_w, pass_fds=(answer_w,), cwd=root, env=env,
            process_group=0,
        )
        assert child.stdin is not None
        try:
            child.stdin.write(json.dumps(self.request, default=str).encode())
            child.stdin.close()
        except OSError:
            pass  # it died before reading: its exit says so
        child.returncode = 0  # we reap it ourselves; keep Popen's finaliser from waiting for it
        return child.pid

    def run(self) -> None:
        """Start the handler, watch it, report to the engine (unless it let go), kill what is left."""
        answer_r, answer_w = os.pipe()
        output_r, output_w = os.pipe()
        started = time.monotonic()
        self.waiting_ready = bool(self.request.get("spawn"))
        self.deadline = started + float(self.request["timeout"]) + (STARTUP if self.waiting_ready else 0.0)
        self.pid = self._start(answer_w, output_w, (answer_r, output_r, self.lifeline, self.result_fd))
        os.close(answer_w)
        os.close(output_w)
        for fd in (answer_r, output_r):
            os.set_blocking(fd, False)
        timed_out = cancelled = False
        try:
            timed_out, cancelled = self._watch(answer_r, output_r)
        except _Stop:
            cancelled = True
        self._drain(answer_r, output_r)
        answered = self._answer() is not None and not (timed_out or cancelled or self.overflow)
        if answered:  # report first: the engine need not wait while the leftovers are killed
            self._report(started, timed_out)
        statuses = process_tree.kill_all_descendants((self.pid,))
        if self.pid in statuses and self.exit_code is None and not timed_out:
            self.exit_code = os.waitstatus_to_exitcode(statuses[self.pid])
        if cancelled and self.request.get("scratch"):  # the engine let go: nobody else will remove it
            shutil.rmtree(str(self.request["scratch"]), ignore_errors=True)
        if not answered and not cancelled:
            self._drain(answer_r, output_r)
            self._report(started, timed_out)
        os.close(answer_r)
        os.close(output_r)

    def _answer(self) -> bytes | None:
        """The complete answer, once its frame has arrived."""
        if len(self.answer) < FRAME.size:
            return None
        size = FRAME.unpack_from(self.answer)[0]
        end = FRAME.size + size
        return bytes(self.answer[FRAME.size:end]) if len(self.answer) >= end else None

    def _report(self, started: float, timed_out: bool) -> None:
        answer = self._answer()
        _send(self.result_fd, {
            "answer": answer.decode("utf-8", "replace") if answer is not None else None,
            "exit": self.exit_code, "timed_out": timed_out, "overflow": self.overflow,
            "output": bytes(self.tail).decode("utf-8", "replace"), "output_bytes": self.output_bytes,
            "seconds": time.monotonic() - started, "pid": self.pid})
        os.close(self.result_fd)  # EOF for the engine now
        self.result_fd = -1

    def _watch(self, answer_r: int, output_r: int) -> tuple[bool, bool]:
        """Until the handler exits, overflows, times out or the engine lets go: (timed out, cancelled)."""
        pidfd = -1
        try:
            pidfd = os.pidfd_open(self.pid)
        except (AttributeError, OSError):
            pass  # no pidfd (old kernel, not Linux): poll for the exit below
        with selectors.DefaultSelector() as selector:
            for fd in (answer_r, output_r, self.lifeline):
                selector.register(fd, selectors.EVENT_READ)
            if pidfd >= 0:
                selector.register(pidfd, selectors.EVENT_READ)
            try:
                while True:
                    if self._exited():
                        return False, False
                    remaining = self.deadline - time.monotonic()
                    if remaining <= 0:
                        return True, False
                    events = selector.select(min(remaining, 3600.0) if pidfd >= 0 else min(remaining, 0.05))
                    for key, _ in events:
                        fd = key.fd
                        if fd == self.lifeline:
                            if not os.read(fd, 64):
                                return False, True
                        elif fd in (answer_r, output_r):
                            if not self._read(fd, answer_r):
                                selector.unregister(fd)
                    if self.overflow or self._answer() is not None:
                        return False, False
            finally:
                if pidfd >= 0:
                    os.close(pidfd)

    def _exited(self) -> bool:
        try:
            pid, status = os.waitpid(self.pid, os.WNOHANG)
        except ChildProcessError:
            return True
        if pid == 0:
            return False
        self.exit_code = os.waitstatus_to_exitcode(status)
        return True

    def _read(self, fd: int, answer_r: int) -> bool:
        """Take what is buffered on `fd` (within the caps); False at EOF."""
        while not self.overflow:
            try:
                block = os.read(fd, _CHUNK)
            except BlockingIOError:
                return True
            if not block:
                return False
            if fd == answer_r:
                self.answer += block
                if self.waiting_ready and self.answer[:1] == READY:
                    del self.answer[:1]
                    self.waiting_ready = False
                    self.deadline = time.monotonic() + float(self.request["timeout"])
                if len(self.answer) > ANSWER_LIMIT + FRAME.size:
                    self.overflow = f"answer exceeded the {ANSWER_LIMIT >> 20} MiB limit ({len(self.answer)} bytes read)"
            else:
                self.output_bytes += len(block)
                self.tail += block
                del self.tail[:-TAIL]
                if self.output_bytes > OUTPUT_LIMIT:
                    self.overflow = (f"output (stdout + stderr) exceeded the {OUTPUT_LIMIT >> 20} MiB limit "
                                     f"({self.output_bytes} bytes read)")
        return True

    def _drain(self, answer_r: int, output_r: int) -> None:
        for fd in (answer_r, output_r):
            self._read(fd, answer_r)
