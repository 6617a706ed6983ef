"""In CI a harness test that skips (harness not installed) is a failure with the reason; locally it skips."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

CONFTEST = Path(__file__).resolve().parent / "conftest.py"
SKIPPING = '''
import pytest

def test_needs_a_harness():
    pytest.skip("opencode: not installed here")

def test_runs():
    assert True
'''


def run_pytest(tmp_path: Path, ci: str | None) -> subprocess.CompletedProcess[str]:
    shutil.copy(CONFTEST, tmp_path / "conftest.py")
    (tmp_path / "test_probe.py").write_text(SKIPPING)
    env = {key: value for key, value in os.environ.items() if key != "CI"}
    if ci is not None:
        env["CI"] = ci
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider", str(tmp_path)],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("ci", ["true", "1"])
def test_in_ci_a_skip_is_a_failure_with_the_reason(tmp_path: Path, ci: str) -> None:
    run = run_pytest(tmp_path, ci)
    assert run.returncode == 1, run.stdout
    assert "1 failed, 1 passed" in run.stdout
    assert "CI is set, so a harness test may not be skipped: opencode: not installed here" in run.stdout


@pytest.mark.parametrize("ci", [None, "false"])
def test_locally_a_skip_stays_a_skip_with_the_reason(tmp_path: Path, ci: str | None) -> None:
    run = run_pytest(tmp_path, ci)
    assert run.returncode == 0, run.stdout
    assert "1 passed, 1 skipped" in run.stdout and "opencode: not installed here" in run.stdout
