"""`examples/multi_agent` through the real `oac test` command, for every dialect: its capability tests judge
the compiled permissions (a broken grant fails the run), not only lists re-checked by hand."""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from open_agent_compiler.compiler.dialects import DIALECTS

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "multi_agent"
OAC = str(Path(sys.executable).with_name("oac"))


def oac_test(project: Path, dialect: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([OAC, "test", "agents:registry", "--config", "prod", "--dialect", dialect], cwd=project,
                          capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL)


def summary(run: subprocess.CompletedProcess[str]) -> str:
    return [line for line in run.stdout.splitlines() if line.startswith("oac test:")][-1]


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return Path(shutil.copytree(EXAMPLE, tmp_path / "multi_agent", ignore=shutil.ignore_patterns(".oac", "build")))


@pytest.mark.parametrize("dialect", sorted(DIALECTS))
def test_oac_test_passes_the_multi_agent_example(project: Path, dialect: str) -> None:
    first = oac_test(project, dialect)
    assert first.returncode == 0, first.stdout + first.stderr
    assert summary(first) == "oac test: discovered=9 passed=9 failed=0 skipped=0 not_runnable=0"
    again = oac_test(project, dialect)
    assert summary(again) == "oac test: discovered=9 passed=0 failed=0 skipped=9 not_runnable=0"


@pytest.mark.parametrize("dialect", sorted(DIALECTS))
def test_a_grant_too_many_fails_the_multi_agent_run(project: Path, dialect: str) -> None:
    agents = project / "agents.py"
    source = agents.read_text()
    granted = 'allowed_commands=["ls notes/*"]'
    assert granted in source
    agents.write_text(source.replace(granted, 'allowed_commands=["ls notes/*", "rm *"]'))
    run = oac_test(project, dialect)
    assert run.returncode == 1, run.stdout + run.stderr
    assert summary(run).startswith("oac test: discovered=9 passed=8 failed=1 ")
    assert "researcher-lists-only: must_not_have_bash_patterns: bash pattern 'rm *' is 'allow'" in run.stdout


@pytest.mark.parametrize("command", ["compile", "test"])
@pytest.mark.parametrize("pattern", ["ls notes/*\\nrm -rf /", "ls notes/*\\x1b[2J"])
def test_a_bash_pattern_with_control_characters_is_one_clear_line(project: Path, command: str, pattern: str) -> None:
    agents = project / "agents.py"
    agents.write_text(agents.read_text().replace('allowed_commands=["ls notes/*"]', f'allowed_commands=["{pattern}"]'))
    args = [OAC, command, "agents:registry", "--config", "prod"]
    args += ["--target", "build"] if command == "compile" else []
    run = subprocess.run(args, cwd=project, capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL)
    assert run.returncode == 2, run.stdout + run.stderr
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in run.stderr, run.stderr
    assert lines[0].startswith("oac: tool 'list-notes': bash pattern ") and "one non-empty line" in lines[0]
    assert not (project / "build").exists()
