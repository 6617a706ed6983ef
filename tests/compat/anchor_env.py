"""The interpreter of the public package open-agent-compiler 1.16.5, for tests that compare behaviour with it.

Found as `$OAC_ANCHOR_PYTHON`, else the venv `~/.cache/oac-anchor/venv` (made here from PyPI with a Python 3.12
found on PATH when it is missing). Where it cannot be had the comparing test is skipped with the reason, and
fails instead under the `CI` environment variable, so CI cannot go green without comparing.
"""

import os
import shutil
import subprocess
from pathlib import Path

import pytest

ANCHOR_VERSION = "1.16.5"
ANCHOR_VENV = Path.home() / ".cache" / "oac-anchor" / "venv"


def _version(python: Path) -> str | None:
    probe = "import importlib.metadata as m; print(m.version('open-agent-compiler'))"
    try:
        done = subprocess.run([str(python), "-c", probe], capture_output=True, text=True, timeout=60, check=False)
    except OSError:
        return None
    return done.stdout.strip() if done.returncode == 0 else None


def _make_venv() -> str | None:
    """Create the anchor venv; None on success, else why it could not be made."""
    base = shutil.which("python3.12")
    if base is None:
        return "no python3.12 on PATH to install open-agent-compiler 1.16.5 into"
    steps = ([base, "-m", "venv", str(ANCHOR_VENV)],
             [str(ANCHOR_VENV / "bin" / "python"), "-m", "pip", "install", "-q",
              f"open-agent-compiler=={ANCHOR_VERSION}"])
    for step in steps:
        done = subprocess.run(step, capture_output=True, text=True, timeout=600, check=False)
        if done.returncode != 0:
            return f"{' '.join(step[:3])} failed: {(done.stderr or done.stdout).strip().splitlines()[-1:]}"
    return None


def anchor_python() -> Path:
    """The anchor interpreter, or skip (fail under CI) saying why there is none."""
    given = os.environ.get("OAC_ANCHOR_PYTHON")
    python = Path(given) if given else ANCHOR_VENV / "bin" / "python"
    problem = None
    if _version(python) != ANCHOR_VERSION:
        problem = f"{python} has no open-agent-compiler {ANCHOR_VERSION}"
        if not given:
            made = _make_venv()
            problem = made if made else (None if _version(python) == ANCHOR_VERSION else problem)
    if problem is not None:
        if os.environ.get("CI"):
            pytest.fail(f"CI: the public package cannot be compared: {problem}")
        pytest.skip(f"the public package cannot be compared: {problem}")
    return python
