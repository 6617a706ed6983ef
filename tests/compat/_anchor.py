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


def _python312() -> str | None:
    found = shutil.which("python3.12")
    if found:
        return found
    candidates = sorted(glob.glob(str(Path.home() / ".pyenv/versions/3.12*/bin/python3.12")))
    return candidates[-1] if candidates else None


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
    python = _python312()
    if python is None:
        unavailable("no Python 3.12 interpreter (python3.12 on PATH or under ~/.pyenv/versions)")
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
            unavailable(f"creating the venv failed: {exc}")
        if install.returncode != 0:
            unavailable("pip install failed: " + (install.stderr.strip().splitlines() or ["no output"])[-1])
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
