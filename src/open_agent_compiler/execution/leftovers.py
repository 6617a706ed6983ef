"""Scratch folders of harness runs, and what a killed run left of them: recorded by pid file, cleaned next run.

Every harness session's scratch folder (its HOME, the harness config — which holds the API key when a real
model endpoint is used — and a copy of the build) is listed in a pid file `.oac/procs/<pid>-<id>.json` naming
the engine process that made it (pid and start time, so a reused pid is not taken for it). Normally the session
removes both at its end, and a harness turn's keeper removes the folder when the engine dies mid-turn. When
both were killed (kill -9 of the whole process group), the next run finds the pid files whose engine is gone,
kills every process still marked with that scratch folder (its environment holds `OAC_SCRATCH=<folder>`, or its
working directory is inside it — never a process found by name), removes the folder and then the pid file.
"""

import atexit
import contextlib
import json
import os
import re
import shutil
import signal
import tempfile
import uuid
from pathlib import Path

from open_agent_compiler import fsio
from open_agent_compiler.errors import OacError

PROCS = ".oac/procs"
MARKER = "OAC_SCRATCH"
PREFIX = "oac-invoke-"


def _start_time(pid: int) -> str | None:
    """The process's start time in clock ticks since boot (field 22 of /proc/PID/stat), None if it is gone. A
    zombie is gone: its parent was killed and an init that does not reap (a container's) keeps it listed."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = stat[stat.rfind(")") + 2:].split()
    if not fields or fields[0] in ("Z", "X"):
        return None
    return fields[19] if len(fields) > 19 else None


def _alive(pid: int, started: str | None) -> bool:
    if not Path("/proc").is_dir():  # no /proc: a signal-0 probe (a reused pid then counts as alive)
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            return True
        return True
    now = _start_time(pid)
    return now is not None and now == started


def sibling_pattern(root: Path) -> re.Pattern[str]:
    """Any scratch folder made beside `root` (another run's): the same temporary folder, prefix and name alphabet."""
    return re.compile(re.escape(str(root.parent / PREFIX)) + r"[a-z0-9_]+")


def make_scratch(project_root: Path) -> tuple[Path, str | None]:
    """A fresh private scratch folder and the pid file that records it (None: no `.oac` to record it in)."""
    root = Path(tempfile.mkdtemp(prefix=PREFIX)).resolve()
    name = f"{os.getpid()}-{uuid.uuid4().hex[:12]}.json"
    record = {"pid": os.getpid(), "started": _start_time(os.getpid()), "scratch": str(root)}
    try:
        fsio.write_file(project_root, f"{PROCS}/{name}", json.dumps(record).encode(), durable=False)
    except (OacError, OSError):
        return root, None  # an unusable .oac: the run's own checks say so; the folder is still removed at the end
    return root, name


_run: dict[str, object] = {}  # this process's handler marker: folder, pid file, project root, pid
_run_ends_registered: list[bool] = []


def handler_marker(project_root: Path) -> str:
    """The folder that marks every real handler this process starts (`MARKER` in its environment), recorded by a
    pid file like a harness's scratch: a handler's daemon that outlives a `kill -9` of the whole run is killed by
    the next run. Made on the first handler (a run without handlers writes nothing); `end_handlers` removes it."""
    if _run.get("root") != project_root:  # (a forked -n worker keeps its engine's: the pid file names the engine)
        end_handlers()  # (another project's, in a process that runs several: its own run has ended)
        folder, record = make_scratch(project_root)
        if not _run_ends_registered:
            atexit.register(end_handlers)
            _run_ends_registered.append(True)
        _run.update(pid=os.getpid(), root=project_root, folder=folder, record=record)
    return str(_run["folder"])


def end_handlers() -> None:
    """The run ended: its handlers' marker folder and pid file go (their processes were killed by their keepers)."""
    if _run.get("pid") == os.getpid():
        remove_scratch(_run["root"], _run["folder"], _run["record"])  # type: ignore[arg-type]
    _run.clear()


def remove_scratch(project_root: Path, root: Path, record: str | None) -> None:
    """The session's end: the folder, then its pid file."""
    shutil.rmtree(root, ignore_errors=True)
    if record is not None:
        with contextlib.suppress(OacError, OSError):
            fsio.remove_file(project_root, f"{PROCS}/{record}")


def _marked(pid: int, scratch: str) -> bool:
    """Whether process `pid` belongs to `scratch`: its environment names it, or it runs inside it."""
    proc = Path(f"/proc/{pid}")
    with contextlib.suppress(OSError):
        if f"{MARKER}={scratch}".encode() in proc.joinpath("environ").read_bytes().split(b"\0"):
            return True
    with contextlib.suppress(OSError):
        cwd = os.readlink(proc / "cwd")
        return cwd == scratch or cwd.startswith(scratch + os.sep)
    return False


def kill_marked(scratch: str) -> list[int]:
    """SIGKILL every process of this user marked with `scratch`; the pids killed."""
    killed: list[int] = []
    try:
        entries = os.listdir("/proc")
    except OSError:
        return killed
    me = os.getpid()
    for entry in entries:
        if entry.isdigit() and int(entry) != me and _marked(int(entry), scratch):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(int(entry), signal.SIGKILL)
                killed.append(int(entry))
    return killed


def clean(project_root: Path) -> list[str]:
    """Clean what killed runs left (see the module doc); the scratch folders removed. Cheap when there is none:
    one listdir of a missing folder."""
    try:
        names = os.listdir(project_root / PROCS)
    except OSError:
        return []
    removed: list[str] = []
    for name in names:
        if not name.endswith(".json"):
            continue
        try:
            record = json.loads((project_root / PROCS / name).read_text())
            pid, started, scratch = int(record["pid"]), record.get("started"), str(record["scratch"])
        except (OSError, ValueError, KeyError, TypeError):
            continue  # not one of ours, or half-written: left alone
        if _alive(pid, started):
            continue  # a run in progress (this one, or another on the same project)
        folder = Path(scratch)
        if folder.name.startswith(PREFIX) and folder.parent == Path(tempfile.gettempdir()).resolve():
            kill_marked(scratch)
            shutil.rmtree(folder, ignore_errors=True)
            removed.append(scratch)
        with contextlib.suppress(OacError, OSError):
            fsio.remove_file(project_root, f"{PROCS}/{name}")
    return removed
