"""A scratch copy of the quickstart and the real `oac` command, for the CLI's adversarial tests."""

import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
OAC = str(Path(sys.executable).with_name("oac"))
DOIT = str(Path(sys.executable).with_name("doit"))
ARGS = ("agents:registry", "--config", "prod")


def quickstart(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    shutil.copytree(REPO / "examples" / "quickstart", root, ignore=shutil.ignore_patterns(".oac", "__pycache__"))
    (root / ".git").mkdir()  # the project's repository root: lookups for pyproject.toml stop here
    return root


def oac(cwd: Path, *args: str, timeout: float = 120, **kwargs: object) -> subprocess.CompletedProcess[str]:
    streams = {} if "stdout" in kwargs else {"stdout": subprocess.PIPE, "stderr": subprocess.PIPE}
    return subprocess.run([OAC, *args], cwd=cwd, text=True, timeout=timeout, **streams, **kwargs)  # type: ignore[call-overload]


def oac_piped(cwd: Path, pipeline: str) -> tuple[subprocess.CompletedProcess[str], int]:
    """Run `oac <args> | <reader>` in bash; return the pipeline and the exit code of `oac` itself."""
    script = f"{OAC} {pipeline} > /dev/null; echo \"${{PIPESTATUS[0]}}\""
    done = subprocess.run(["bash", "-c", script], cwd=cwd, capture_output=True, text=True, timeout=120)
    return done, int(done.stdout.strip().splitlines()[-1])


def one_line(done: subprocess.CompletedProcess[str], *needles: str, code: int = 2) -> str:
    """The run ended with `code`, no traceback anywhere, and exactly one line on stderr holding every needle."""
    everything = done.stdout + done.stderr
    assert "Traceback" not in everything, everything
    assert done.returncode == code, everything
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    for needle in needles:
        assert needle in lines[0], lines[0]
    return lines[0]


def files_under(root: Path) -> set[str]:
    return {p.relative_to(root).as_posix() for p in root.rglob("*")}
