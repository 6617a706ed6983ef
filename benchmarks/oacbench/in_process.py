"""Run `oac` inside the measuring process (profile_child.py, phases_child.py): standard library only.

The console entry point ends with `os._exit` once its files are closed; here that becomes a SystemExit, so the
measurement can be written first. `oac test` runs without its watchdog here (see `run_oac`). Forked helpers (the
handler zygote, keepers, handlers) still really exit.
"""

from __future__ import annotations

import os
import sys
from typing import Any, Callable, NoReturn

_HARD_EXIT = os._exit
_MEASURED_PID = os.getpid()


def _raise_exit(status: int) -> NoReturn:
    if os.getpid() != _MEASURED_PID:
        _HARD_EXIT(status)
    raise SystemExit(status)


def command_line(argv: list[str], usage: str) -> tuple[str, list[str]] | None:
    """(OUT, the oac command) from `OUT -- oac ...`, or None after printing `usage`."""
    if len(argv) < 3 or argv[1] != "--":
        print(usage, file=sys.stderr)
        return None
    return argv[0], argv[2:]


def run_oac(command: list[str], *, imported: Callable[[], None] = lambda: None,
            started: Callable[[], None] = lambda: None, ended: Callable[[], None] = lambda: None) -> Any:
    """Run `command` (argv of `oac`) from the current folder; return its exit code. `imported` is called once
    the CLI is imported, `started` right before it runs, `ended` right after (also when it raised)."""
    sys.argv = command
    sys.path.insert(0, ".")
    # No watchdog fork: the engine would be the child, and this process (the watchdog) would measure only its wait.
    # The watchdog's own cost is in the rows measured from outside (wall time, RSS).
    os.environ["OAC_WATCHDOG"] = "0"
    code: Any = 0
    os._exit = _raise_exit
    started()
    try:
        from open_agent_compiler.cli import main as oac_main

        imported()
        oac_main()
    except SystemExit as exc:
        code = exc.code
    finally:
        ended()
        os._exit = _HARD_EXIT
    return code
