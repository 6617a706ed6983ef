"""Run one `oac test` process and measure it: wall time (perf_counter around the process) and peak RSS.

Peak RSS comes from GNU `/usr/bin/time -f %M` when present, else from a small wrapper that reads
`getrusage(RUSAGE_CHILDREN).ru_maxrss`. Both report the largest single process of the tree, not a sum.
"""

from __future__ import annotations

import functools
import os
import re
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

GNU_TIME = Path("/usr/bin/time")
SUMMARY = re.compile(r"^oac (?:test|compile): (.*)$", re.MULTILINE)  # `oac compile: <dialect> -> <dir>: written=N ...`
RUSAGE_WRAPPER = (
    "import resource, subprocess, sys\n"
    "rc = subprocess.call(sys.argv[2:])\n"
    "open(sys.argv[1], 'w').write(str(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss))\n"
    "sys.exit(rc)\n"
)


@dataclass
class Measurement:
    wall_s: float
    rss_kb: int
    returncode: int
    summary: dict[str, int] = field(default_factory=dict)
    tail: str = ""


@functools.lru_cache(maxsize=1)
def rss_method() -> str:
    if GNU_TIME.is_file():
        probe = subprocess.run([str(GNU_TIME), "-f", "%M", "true"], capture_output=True, text=True)
        if probe.returncode == 0 and probe.stderr.strip().isdigit():
            return "/usr/bin/time -f %M"
    return "getrusage(RUSAGE_CHILDREN)"


def parse_summary(stdout: str) -> dict[str, int]:
    """{'discovered': N, 'passed': N, ...} from the `oac test: ...` line, or {} when there is none."""
    found = SUMMARY.findall(stdout)
    if not found:
        return {}
    pairs = (item.split("=", 1) for item in found[-1].split() if "=" in item)
    return {key: int(value) for key, value in pairs if value.isdigit()}


def clean_env() -> dict[str, str]:
    """The caller's environment without anything that would make one venv leak into another, and with Python's
    default bytecode caching (both implementations then reuse the bytecode of the generated project)."""
    dropped = ("VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME", "PYTHONDONTWRITEBYTECODE")
    env = {k: v for k, v in os.environ.items() if k not in dropped}
    return env


def run_measured(argv: list[str], cwd: Path, timeout: float) -> Measurement:
    with tempfile.NamedTemporaryFile("r", suffix=".rss", delete=False) as handle:
        rss_file = Path(handle.name)
    if rss_method().startswith("/usr/bin/time"):
        command = [str(GNU_TIME), "-f", "%M", "-o", str(rss_file), *argv]
    else:
        command = [sys.executable, "-c", RUSAGE_WRAPPER, str(rss_file), *argv]
    start = time.perf_counter()
    try:
        done = subprocess.run(command, cwd=cwd, env=clean_env(), capture_output=True, text=True, timeout=timeout)
        wall = time.perf_counter() - start
        returncode, stdout, stderr = done.returncode, done.stdout, done.stderr
    except subprocess.TimeoutExpired as exc:
        wall, returncode = time.perf_counter() - start, -9
        stdout, stderr = _text(exc.stdout), _text(exc.stderr) + f"\n(timed out after {timeout:g}s)"
    try:
        rss_kb = int(rss_file.read_text().split()[-1])
    except (OSError, ValueError, IndexError):
        rss_kb = 0
    finally:
        rss_file.unlink(missing_ok=True)
    tail = "\n".join((stdout + stderr).strip().splitlines()[-6:])
    return Measurement(wall_s=wall, rss_kb=rss_kb, returncode=returncode, summary=parse_summary(stdout), tail=tail)


def _text(value: bytes | str | None) -> str:
    if value is None:
        return ""
    return value if isinstance(value, str) else value.decode("utf-8", "replace")
