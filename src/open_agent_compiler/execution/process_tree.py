"""Process-tree primitives for running untrusted handler code: find and kill every descendant, die with a parent.

Linux gives exact answers (`prctl` subreaper and parent-death signal, `/proc` for the tree); elsewhere the
functions degrade to what POSIX offers (process groups) and report that they could not do more.
"""

import contextlib
import ctypes
import os
import signal
import sys
from pathlib import Path
from typing import Any

_PR_SET_PDEATHSIG = 1
_PR_SET_CHILD_SUBREAPER = 36
_PROC = Path("/proc")


def _load_prctl() -> Any:
    """libc's prctl, looked up once at import (ctypes.util.find_library would run a subprocess each time)."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        return ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None


_libc_prctl = _load_prctl()


def _prctl(option: int, value: int) -> bool:
    return _libc_prctl is not None and _libc_prctl(option, value, 0, 0, 0) == 0


def become_subreaper() -> bool:
    """Orphaned descendants (a handler's children after it exits, even in their own session) become ours."""
    return _prctl(_PR_SET_CHILD_SUBREAPER, 1)


def die_with_parent(signum: int = signal.SIGKILL) -> bool:
    """Receive `signum` when the process that forked us ends; if it already ended, act on it now."""
    parent = os.getppid()
    done = _prctl(_PR_SET_PDEATHSIG, int(signum))
    if done and os.getppid() != parent:  # the parent died before the request took effect
        os.kill(os.getpid(), signum)
    return done


def _children_of(pid: int) -> list[int]:
    """Direct children of `pid` (Linux: /proc/PID/task/*/children, else a scan of /proc/*/stat)."""
    found: list[int] = []
    task_dir = _PROC / str(pid) / "task"
    try:
        for task in os.listdir(task_dir):
            found.extend(int(p) for p in (task_dir / task / "children").read_text().split())
        return found
    except OSError:  # no such file (kernel without it, or the process is gone): scan instead
        pass
    return [child for child, parent in _scan_parents().items() if parent == pid]


def _scan_parents() -> dict[int, int]:
    parents: dict[int, int] = {}
    try:
        entries = os.listdir(_PROC)
    except OSError:
        return parents
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            stat = (_PROC / entry / "stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rfind(")") + 2:].split()  # the command name may hold spaces and parentheses
        with contextlib.suppress(IndexError, ValueError):
            parents[int(entry)] = int(fields[1])
    return parents


def descendants(pid: int) -> list[int]:
    """Every live descendant of `pid` (zombies included), parents before their children. [] without /proc."""
    if not _PROC.is_dir():
        return []
    found: list[int] = []
    frontier = [pid]
    seen = {pid}
    while frontier:
        children = [c for c in _children_of(frontier.pop()) if c not in seen]
        seen.update(children)
        found.extend(children)
        frontier.extend(children)
    return found


def kill_group(pgid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)


def kill_all_descendants(groups: tuple[int, ...] = ()) -> dict[int, int]:
    """In a subreaper: SIGKILL `groups` and every descendant until none is left, reaping them; returns
    pid → exit status of the direct children reaped. Ends when this process has no child at all."""
    me = os.getpid()
    statuses: dict[int, int] = {}
    while True:
        for group in groups:
            kill_group(group)
        for pid in descendants(me):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        try:
            pid, status = os.waitpid(-1, 0)  # one direct child ended; orphans of the killed become ours
        except ChildProcessError:
            return statuses
        except InterruptedError:
            continue
        statuses[pid] = status


def close_fds_except(keep: set[int]) -> None:
    """Close every inherited descriptor above stderr except `keep` (a forked copy of the engine holds the pipes
    of other handlers: keeping them open would hide those handlers' ends)."""
    try:
        open_fds = [int(fd) for fd in os.listdir("/proc/self/fd")]  # cheaper than closing up to the fd limit
    except OSError:
        try:
            open_fds = [int(fd) for fd in os.listdir("/dev/fd")]
        except OSError:
            open_fds = list(range(3, 1024))
    for fd in open_fds:
        if fd >= 3 and fd not in keep:
            with contextlib.suppress(OSError):
                os.close(fd)
