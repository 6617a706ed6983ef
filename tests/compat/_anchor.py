"""The public open-agent-compiler 1.16.5, installed from PyPI into a Python 3.12 venv outside the repo
(`~/.cache/oac-anchor/venv`, or `$OAC_ANCHOR_VENV`), for tests that compare our behaviour with it.

`anchor_venv()` returns the venv, creating it on first use (pip, from the configured index), or skips the
calling test with the reason it cannot be had — a failure instead when `CI` is set to a true value.
"""

from __future__ import annotations

import fcntl
import glob
import os
import shutil
import subprocess
from pathlib import Path

import pytest

VERSION = "1.16.5"
FALSE_WORDS = ("", "0", "false", "no", "off")


def in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() not in FALSE_WORDS


def unavailable(reason: str) -> None:
    message = f"open-agent-compiler {VERSION} is not available: {reason}"
    if in_ci():
        pytest.fail(f"CI is set, so the comparison with the public package may not be skipped: {message}")
    pytest.skip(message)


def venv_dir() -> Path:
    return Path(os.environ.get("OAC_ANCHOR_VENV") or Path.home() / ".cache/oac-anchor/venv")


def _python312_candidates() -> list[str]:
    """Every place a Python 3.12 may be, in order: PATH (may be a pyenv shim that only exits 127), pyenv, the system."""
    pyenv_root = Path(os.environ.get("PYENV_ROOT") or Path.home() / ".pyenv")
    found = [shutil.which("python3.12") or ""]
    found += sorted(glob.glob(str(pyenv_root / "versions/3.12*/bin/python3.12")), reverse=True)
    found += ["/usr/local/bin/python3.12", "/usr/bin/python3.12"]
    return list(dict.fromkeys(f for f in found if f and os.path.isfile(f)))


def _python312() -> tuple[str | None, str]:
    """The first candidate that really runs as 3.12, and a line saying what was tried."""
    tried = []
    for candidate in _python312_candidates():
        try:
            probe = subprocess.run([candidate, "-c", "import sys; assert sys.version_info[:2] == (3, 12)"],
                                   capture_output=True, timeout=60)
        except (OSError, subprocess.SubprocessError) as exc:
            tried.append(f"{candidate} ({type(exc).__name__})")
            continue
        if probe.returncode == 0:
            return candidate, f"using {candidate}"
        tried.append(f"{candidate} (exit {probe.returncode})")
    return None, "tried " + (", ".join(tried) or "nothing: none found")


def _installed(venv: Path) -> bool:
    python = venv / "bin/python"
    if not python.exists():
        return False
    version = "import importlib.metadata as m; print(m.version('open-agent-compiler'))"
    probe = subprocess.run([str(python), "-c", version], capture_output=True, text=True, timeout=60)
    return probe.returncode == 0 and probe.stdout.strip() == VERSION


def anchor_venv() -> Path:
    """The venv holding the public package (created once under a lock, then reused)."""
    venv = venv_dir()
    if _installed(venv):
        return venv
    python, tried = _python312()
    if python is None:
        unavailable(f"no Python 3.12 interpreter that runs (PATH, pyenv's versions, the system's): {tried}")
    venv.parent.mkdir(parents=True, exist_ok=True)
    with open(venv.with_name(venv.name + ".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # one creator; the others wait and then find it installed
        if _installed(venv):
            return venv
        shutil.rmtree(venv, ignore_errors=True)  # a half-made venv of an interrupted run
        try:
            subprocess.run([python, "-m", "venv", str(venv)], check=True, capture_output=True, timeout=300)
            install = subprocess.run([str(venv / "bin/python"), "-m", "pip", "install", "-q",
                                      f"open-agent-compiler=={VERSION}"], capture_output=True, text=True, timeout=900)
        except (OSError, subprocess.SubprocessError) as exc:
            unavailable(f"creating the venv failed ({tried}): {exc}")
        if install.returncode != 0:
            last = (install.stderr.strip().splitlines() or ["no output"])[-1]
            unavailable(f"pip install failed ({tried}): {last}")
        if not _installed(venv):
            unavailable(f"the installed package does not report version {VERSION}")
    return venv


def anchor_python() -> Path:
    """The public package's interpreter: `$OAC_ANCHOR_PYTHON` when set (it must hold 1.16.5), else the venv."""
    given = os.environ.get("OAC_ANCHOR_PYTHON")
    if not given:
        return anchor_venv() / "bin/python"
    version = "import importlib.metadata as m; print(m.version('open-agent-compiler'))"
    probe = subprocess.run([given, "-c", version], capture_output=True, text=True, timeout=60)
    if probe.returncode != 0 or probe.stdout.strip() != VERSION:
        unavailable(f"$OAC_ANCHOR_PYTHON ({given}) does not hold open-agent-compiler {VERSION}")
    return Path(given)
