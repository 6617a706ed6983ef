"""`oac test --watch`: run once, then on every save run `oac test` again — the same doit graph, the same keys,
the same records — in a process forked for that cycle, so no module of the project survives from one cycle to the
next (a changed module is imported anew; a registry that fails to load is its one line, and watching goes on).

Three processes: this watcher (watchfiles' inotify watcher, the keys, the terminal), a *fork server* forked
before any thread exists that has imported the engine but never the project, and per cycle one child of the fork
server that runs `oac test` with the same options plus a short `--explain` (only the tests that run, and why).
The watcher never imports the project; it ignores what a cycle writes itself (`.oac/`, the results file, JUnit).
"""

import json
import os
import queue
import signal
import sys
import threading
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any, TextIO

from open_agent_compiler.tasks.settings import TestOptions

KEYS = "a: run all, f: run failed, q: quit"
READY = "oac watch: watching"  # the line a cycle ends with: tools and tests wait for it, never for time
EXTRA = {"a": ("--force",), "f": ("--lf",)}
_IGNORED_PARTS = frozenset({".oac", "__pycache__", ".git", ".hg", ".venv", ".hypothesis", ".pytest_cache",
                            ".mypy_cache", "node_modules"})


class ShortExplain:
    """stdout of a cycle: `--explain` without its per-test skip lines (a warm cycle skips thousands)."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream
        self._line = ""

    def write(self, text: str) -> int:
        self._line += text
        *lines, self._line = self._line.split("\n")
        kept = [line for line in lines if not line.startswith("  skip '")]
        if kept:
            self._stream.write("\n".join(kept) + "\n")
        return len(text)

    def flush(self) -> None:
        self._stream.flush()

    def isatty(self) -> bool:
        return False

    def fileno(self) -> int:
        return self._stream.fileno()


class Resident:
    """What a cycle that may stay loaded hands `oac test` (as click's `obj`): `oac test` builds the options as
    always, then `run` keeps the plan (`tasks.resident`) when the options allow, else runs as `oac test` does."""

    def __init__(self) -> None:
        self.plan: Any = None

    def run(self, options: TestOptions) -> int:
        from open_agent_compiler.tasks.resident import ResidentPlan, not_resident
        from open_agent_compiler.tasks.run import run_tests

        if not_resident(options) is not None:
            return run_tests(options)
        self.plan = ResidentPlan(options)
        return self.plan.cycle(None)


def _cycle(args: list[str], resident: Resident | None = None) -> int:
    """In a forked child: `oac test ARGS --explain`, as the command line runs it; its exit code."""
    import click

    from open_agent_compiler.cli import oac

    signal.signal(signal.SIGINT, signal.default_int_handler)
    sys.stdout = ShortExplain(sys.stdout)  # type: ignore[assignment]
    try:
        returned = oac.main(args=["test", *args, "--explain"], prog_name="oac", standalone_mode=False,
                            obj=resident)
        code = returned if isinstance(returned, int) else 0
    except click.ClickException as error:
        error.show()
        code = error.exit_code
    except (KeyboardInterrupt, click.exceptions.Abort):
        code = 130
    except SystemExit as exit_:
        code = exit_.code if isinstance(exit_.code, int) else (0 if exit_.code is None else 1)
        if exit_.code is not None and not isinstance(exit_.code, int):
            print(exit_.code, file=sys.stderr)
    sys.stdout.flush()
    sys.stderr.flush()
    return code


def _serve_resident(args: list[str], requests: TextIO, replies: TextIO) -> None:
    """A child of the fork server that loads the plan, runs the first cycle and, when the options allow, stays:
    each request is the changed paths, each reply the cycle's exit code, or why a fresh load is needed."""
    resident = Resident()
    code = _cycle(args, resident)
    plan = resident.plan
    replies.write(json.dumps({"code": code, "kept": plan is not None}) + "\n")
    replies.flush()
    if plan is None:
        return
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # a cycle's process gets Ctrl-C; the fork server ends us
    for line in requests:
        changed = json.loads(line)
        reason = plan.fresh_reason(changed)
        if reason is not None:
            replies.write(json.dumps({"fresh": reason}) + "\n")
            replies.flush()
            return
        code = plan.cycle(changed)
        sys.stdout.flush()
        replies.write(json.dumps({"code": code}) + "\n")
        replies.flush()


class _Child:
    """The fork server's resident child and the pipes to it."""

    def __init__(self, args: list[str], closing: list[TextIO]) -> None:
        requests_r, requests_w = os.pipe()
        replies_r, replies_w = os.pipe()
        sys.stdout.flush()
        sys.stderr.flush()
        self.pid = os.fork()
        if self.pid == 0:
            for stream in closing:  # the watcher's pipes: only the fork server answers on them
                stream.close()
            os.close(requests_w)
            os.close(replies_r)
            code = 0
            try:
                with os.fdopen(requests_r, "r") as requests, os.fdopen(replies_w, "w") as replies:
                    _serve_resident(args, requests, replies)
            except BaseException:  # noqa: BLE001 - it ends with its cycle either way
                code = 1
            os._exit(code)
        os.close(requests_r)
        os.close(replies_w)
        self.requests = os.fdopen(requests_w, "w")
        self.replies = os.fdopen(replies_r, "r")

    def ask(self, request: Any) -> dict[str, Any] | None:
        """Its reply, or None: it has ended."""
        try:
            if request is not None:
                self.requests.write(json.dumps(request) + "\n")
                self.requests.flush()
            line = self.replies.readline()
        except (BrokenPipeError, OSError):
            return None
        return json.loads(line) if line else None

    def end(self) -> None:
        try:
            self.requests.close()
        except OSError:
            pass
        os.waitpid(self.pid, 0)
        self.replies.close()


class ForkServer:
    """A process holding the imported engine (never the project) that forks one child per cycle, or keeps the
    child of the last full cycle loaded (`tasks.resident`) for the cycles after a save it can re-key."""

    def __init__(self) -> None:
        commands_r, self._commands = os.pipe()
        self._answers, answers_w = os.pipe()
        self.kept = False  # the server holds a resident plan
        sys.stdout.flush()  # nothing buffered is written twice
        sys.stderr.flush()
        self.pid = os.fork()
        if self.pid == 0:  # the server: no thread exists yet in the process it was forked from
            os.close(self._commands)
            os.close(self._answers)
            code = 0
            try:
                self._serve(commands_r, answers_w)
            except BaseException:  # noqa: BLE001 - the server ends with the watcher either way
                code = 1
            os._exit(code)
        os.close(commands_r)
        os.close(answers_w)
        self._answers_file = os.fdopen(self._answers, "r")

    @staticmethod
    def _serve(commands_r: int, answers_w: int) -> None:
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C reaches the running cycle; the watcher ends us
        import gc

        import open_agent_compiler.cli.test_cmd  # noqa: F401 - the engine, imported once for every cycle
        gc.freeze()  # what is imported now is never traversed again in a cycle
        kept: _Child | None = None
        with os.fdopen(commands_r, "r") as commands, os.fdopen(answers_w, "w") as answers:
            for line in commands:
                command = json.loads(line)
                sys.stdout.flush()
                if "changed" in command:
                    answer = kept.ask(command["changed"]) if kept is not None else None
                    if answer is None or "fresh" in answer:
                        answer = answer or {"fresh": "no plan is loaded"}
                        if kept is not None:
                            kept.end()
                            kept = None
                elif command.get("keep"):
                    if kept is not None:
                        kept.end()
                    kept = _Child(command["run"], [commands, answers])
                    answer = kept.ask(None) or {"code": 1}
                    if not answer.get("kept"):
                        kept.end()
                        kept = None
                else:
                    child = os.fork()
                    if child == 0:
                        os._exit(_cycle(command["run"]))
                    _, status = os.waitpid(child, 0)
                    answer = {"code": os.waitstatus_to_exitcode(status)}
                answers.write(json.dumps(answer) + "\n")
                answers.flush()
            if kept is not None:
                kept.end()

    def ask(self, command: dict[str, Any]) -> dict[str, Any]:
        os.write(self._commands, (json.dumps(command) + "\n").encode())
        answer = self._answers_file.readline()
        if not answer:
            raise RuntimeError("oac watch: the fork server ended")
        return json.loads(answer)

    def run(self, args: list[str], *, keep: bool = False) -> int:
        """A full cycle; `keep`: its plan may stay loaded for the next saves."""
        answer = self.ask({"run": args, "keep": keep})
        self.kept = bool(answer.get("kept"))
        return _exit_code(answer["code"])

    def changed(self, paths: list[str]) -> int | str:
        """A cycle of the resident plan for these changed paths: its exit code, or why a fresh load is needed."""
        answer = self.ask({"changed": paths})
        if "fresh" in answer:
            self.kept = False
            return str(answer["fresh"])
        return _exit_code(answer["code"])

    def close(self) -> None:
        """No more cycles: the server ends once the running one has (it got the same Ctrl-C), and is reaped."""
        try:
            os.close(self._commands)
        except OSError:
            pass
        os.waitpid(self.pid, 0)
        self._answers_file.close()


def _exit_code(code: int) -> int:
    return 128 - code if code < 0 else code  # killed by signal N: 128 + N, as a shell says


def relevant(changes: Iterable[tuple[int, str]], root: Path, own: set[Path]) -> list[str]:
    """The changed paths a cycle should look at, relative to `root`: not what a cycle writes (`own`, `.oac/`),
    not caches, version control or editor swap files."""
    found = set()
    for _, raw in changes:
        path = Path(raw)
        if path in own or raw.endswith((".pyc", ".pyo", "~", ".swp", ".swx")):
            continue
        try:
            relative = path.relative_to(root)
        except ValueError:
            continue
        if _IGNORED_PARTS.intersection(relative.parts) or relative.name.startswith(".#"):
            continue
        found.add(str(relative))
    return sorted(found)


def _read_keys(keys: "queue.Queue[str]", wake: threading.Event) -> None:
    """Single keys from stdin (a terminal in cbreak mode, or a pipe); EOF just stops listening."""
    stream = sys.stdin
    while True:
        char = stream.read(1)
        if not char:
            return
        if char in "afq":
            keys.put(char)
            wake.set()


def _terminal_keys() -> Any:
    """cbreak mode on a terminal stdin (a key acts without Enter); returns how to restore it."""
    if not sys.stdin.isatty():
        return None
    import termios
    import tty

    saved = termios.tcgetattr(sys.stdin)
    tty.setcbreak(sys.stdin)
    return lambda: termios.tcsetattr(sys.stdin, termios.TCSADRAIN, saved)


def _interrupt(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt


def cycle_args(argv: list[str]) -> list[str]:
    """The `oac test` arguments of this command line without `--watch`."""
    rest = argv[argv.index("test") + 1:] if "test" in argv else []
    return [arg for arg in rest if arg != "--watch"]


def watch(options: TestOptions, args: list[str], out: TextIO | None = None) -> int:
    """Run `oac test ARGS` now and after every relevant change until `q`, Ctrl-C or SIGTERM; 0, or 130/143."""
    from watchfiles._rust_notify import RustNotify  # the watcher `watchfiles.watch` drives, started here at once

    out = out or sys.stdout
    root = options.root
    own = {options.results_path} | ({options.junit_path} if options.junit_path else set())
    server = ForkServer()  # before any thread: inotify's and the keys' come after

    def say(text: str) -> None:
        out.write(text + "\n")
        out.flush()

    def cycle(number: int, why: str, extra: tuple[str, ...] = (), changed: list[str] | None = None) -> None:
        say(f"oac watch: cycle {number}: {why}")
        started = time.perf_counter()
        answer: int | str = ""
        if changed is not None and server.kept:
            answer = server.changed(changed)
            if isinstance(answer, str):
                say(f"oac watch: loading afresh: {answer}")
        if isinstance(answer, int):
            code = answer
        elif extra:  # a/f: one cycle with --force / --lf; the loaded plan stays
            code = server.run([*args, *extra])
        else:
            code = server.run(args, keep=True)
        what = {0: "passed", 1: "failed", 2: "could not run (see the line above)"}.get(code, f"exit {code}")
        say(f"oac watch: cycle {number} {what} in {time.perf_counter() - started:.2f} s")

    restore = None
    signal.signal(signal.SIGTERM, _interrupt)
    try:
        notify = RustNotify([str(root)], False, False, 300, True, False)  # watching from now on
        restore = _terminal_keys()
        keys: queue.Queue[str] = queue.Queue()
        wake = threading.Event()
        threading.Thread(target=_read_keys, args=(keys, wake), daemon=True, name="oac-watch-keys").start()
        number = 1
        cycle(number, "start")  # (loads the plan that stays for the saves after it, when the options allow)
        while True:
            say(f"{READY} {root} ({KEYS})")
            while True:
                raw = notify.watch(1000, 20, 0, wake)  # a burst of saves ends 20 ms after its last event
                if raw == "signal":
                    raise KeyboardInterrupt
                if raw == "stop":
                    wake.clear()
                    key = keys.get()
                    if key == "q":
                        return 0
                    number += 1
                    cycle(number, "run all (a)" if key == "a" else "run failed (f)", EXTRA[key])
                    break
                if isinstance(raw, set):
                    changed = relevant(raw, root, own)
                    if changed:
                        number += 1
                        shown = ", ".join(changed[:5]) + (f" and {len(changed) - 5} more" if len(changed) > 5 else "")
                        cycle(number, f"changed {shown}", changed=changed)
                        break
    except KeyboardInterrupt:
        say("oac watch: interrupted")
        return 130
    finally:
        server.close()  # waits for a cycle still ending (Ctrl-C reached it too): nothing is left running
        if restore is not None:
            restore()
