"""The public package's venv is made with a Python 3.12 that really runs, not the first name on PATH."""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
import _anchor  # noqa: E402


def _script(path: Path, body: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\n" + body + "\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


def test_a_shim_that_exits_127_is_passed_over_for_pyenvs_own(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    shim = _script(tmp_path / "shims/python3.12", "echo 'pyenv: python3.12: command not found' >&2; exit 127")
    real = _script(tmp_path / "pyenv/versions/3.12.1/bin/python3.12", "exit 0")
    monkeypatch.setenv("PATH", str(shim.parent))
    monkeypatch.setenv("PYENV_ROOT", str(tmp_path / "pyenv"))
    python, said = _anchor._python312()
    assert python == str(real)
    assert said == f"using {real}"


def test_none_that_runs_names_every_candidate_tried(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    shim = _script(tmp_path / "shims/python3.12", "exit 127")
    broken = _script(tmp_path / "pyenv/versions/3.12.0/bin/python3.12", "exit 1")
    monkeypatch.setenv("PATH", str(shim.parent))
    monkeypatch.setenv("PYENV_ROOT", str(tmp_path / "pyenv"))
    monkeypatch.setattr(os.path, "isfile", lambda p: p in (str(shim), str(broken)))
    python, said = _anchor._python312()
    assert python is None
    assert f"{shim} (exit 127)" in said and f"{broken} (exit 1)" in said
