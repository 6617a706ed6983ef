"""The watchdog: a process outside the engine that outlives it, so an engine that dies or hangs is still reported.

`supervise()` forks once at the start of `oac test`: the child goes on as the engine, the parent becomes the
watchdog (no second interpreter start: it only waits on the engine's pidfd). The engine says "I ended through
Python's normal exit" with one byte on a pipe (`ended`, called by the CLI's exit and at Python's normal exit; user code's `os._exit` or a signal skips it); without that byte the
watchdog prints one line naming the test that was running and exits 2. Every test that runs user code writes
its deadline and id in a slot of a shared page (`arm`); a deadline that passed `GRACE` seconds ago and is still
armed means the engine could not stop the test (C code holding the GIL): the watchdog kills the engine (its
workers, zygote and keepers die with it) and exits 2 with one line. Records are written before user code runs
(`before_user_code`), so those already earned are kept. SIGINT/SIGTERM/SIGHUP sent to the watchdog go to the
engine, which stops in order.
"""

import atexit
import contextlib
import gc
import mmap
import os
import select
import signal
import struct
import sys
import time
from collections.abc import Callable, Iterator
from typing import NoReturn

SLOTS = 64  # one per engine process (the engine and its -n workers), chosen by pid
SLOT = struct.Struct("<qd240s")  # pid, deadline (CLOCK_MONOTONIC, shared by all processes), test id
GRACE = 5.0  # seconds after a deadline the engine has to stop the test itself (its own deadline + settling)
POLL = 0.5  # seconds between the watchdog's looks at the deadlines

_area: mmap.mmap | None = None
_engine = 0
_clean_w = -1
_before: list[Callable[[], None]] = []


def supervise() -> None:
    """Fork the watchdog (once; only where fork and pidfds exist). Returns in the engine; the watchdog exits."""
    global _area, _engine, _clean_w
    if _area is not None or os.environ.get("OAC_WATCHDOG") == "0" or not _pidfds_work():
        return
    area = mmap.mmap(-1, SLOTS * SLOT.size)
    clean_r, clean_w = os.pipe()
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:
        os.close(clean_r)
        _area, _engine, _clean_w = area, os.getpid(), clean_w
        from open_agent_compiler.execution import process_tree

        process_tree.die_with_parent(signal.SIGTERM)  # the watchdog killed alone: an orderly stop
        atexit.register(ended)
        return
    os.close(clean_w)
    _watch(pid, clean_r, area)


def console_of(*modules: str) -> bool:
    """Whether this process is the console program of one of `modules` (`doit`, `pytest`), started as itself or
    with `python -m`: only then is it ours to split (a program that runs doit or pytest in process is not)."""
    main = sys.modules.get("__main__")
    spec = getattr(main, "__spec__", None)
    name = getattr(spec, "name", "") or ""
    if name.partition(".")[0] in modules:
        return True
    return name in ("", "__main__") and os.path.basename(sys.argv[0] if sys.argv else "") in modules


def _pidfds_work() -> bool:
    """Whether this kernel gives pidfds (Linux >= 5.3; not under valgrind): without them, no watchdog."""
    try:
        os.close(os.pidfd_open(os.getpid()))
    except (AttributeError, OSError):
        return False
    return True


def ended() -> None:
    """The engine ends on its own terms (called right before it exits; also at Python's normal exit)."""
    if os.getpid() == _engine:  # (not a forked worker or keeper running its copy of atexit)
        with contextlib.suppress(OSError):
            os.write(_clean_w, b"E")


def before_user_code(hook: Callable[[], None]) -> None:
    """Run `hook` before each armed test (e.g. write the batched records, so the engine's death loses none)."""
    if hook not in _before:
        _before.append(hook)


@contextlib.contextmanager
def armed(test_id: str, seconds: float) -> Iterator[None]:
    """The test `test_id` runs user code until `seconds` from now: the watchdog ends the engine if it still does
    `GRACE` seconds after that. A no-op without a watchdog."""
    if _area is None:
        yield
        return
    for hook in _before:
        hook()
    pid = os.getpid()
    offset = (pid % SLOTS) * SLOT.size
    label = test_id.encode("utf-8", "replace")[:240]
    SLOT.pack_into(_area, offset, pid, time.monotonic() + seconds, label)
    try:
        yield
    finally:
        SLOT.pack_into(_area, offset, 0, 0.0, b"")


def _slots(area: mmap.mmap) -> Iterator[tuple[int, float, str]]:
    for index in range(SLOTS):
        pid, end, label = SLOT.unpack_from(area, index * SLOT.size)
        if pid:
            yield pid, end, label.rstrip(b"\0").decode("utf-8", "replace")


def _say(line: str) -> None:
    with contextlib.suppress(OSError):
        os.write(2, f"oac: {line}\n".encode())


def _watch(engine: int, clean_r: int, area: mmap.mmap) -> NoReturn:
    """The watchdog's whole life: wait for the engine, end with its exit code, or say why not and exit 2."""
    gc.disable()
    for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):  # (a second Ctrl-C is one the engine ignores)
        signal.signal(signum, lambda number, frame: os.kill(engine, number))
    pidfd = os.pidfd_open(engine)
    waiting = [pidfd, clean_r]
    clean = False
    while True:
        ready, _, _ = select.select(waiting, [], [], POLL)
        if clean_r in ready:
            clean = clean or bool(os.read(clean_r, 1))
            waiting.remove(clean_r)  # (EOF or the byte: nothing more to read)
        if pidfd in ready:
            break
        now = time.monotonic()
        overdue = [(end, label) for _, end, label in _slots(area) if end and now > end + GRACE]
        if overdue:
            end, label = overdue[0]
            with contextlib.suppress(ProcessLookupError):
                os.kill(engine, signal.SIGKILL)
            os.waitpid(engine, 0)
            _say(f"{label}: still running {now - end:.0f}s after its deadline and could not be stopped (code that "
                 "holds the GIL, e.g. C code): the engine was killed; the records already written are kept")
            os._exit(2)
    if not clean:  # the byte may have arrived with the exit
        with contextlib.suppress(OSError):
            clean = bool(os.read(clean_r, 1)) if select.select([clean_r], [], [], 0)[0] else False
    _, status = os.waitpid(engine, 0)
    code = os.waitstatus_to_exitcode(status)
    if clean:
        os._exit(code if code >= 0 else 128 - code)
    running = [label for _, _, label in _slots(area)]
    how = f"exit status {code}" if code >= 0 else f"killed by {signal.Signals(-code).name}"
    during = f" while running {running[0]}" if running else ""
    _say(f"the test engine ended before the run did ({how}){during}: user code ended or killed the process; "
         "the records already written are kept")
    os._exit(2)
