"""The two implementations under test: ours (this repository's `oac`) and the anchor (the public
`open-agent-compiler==1.16.5`, installed by the benchmark into its own Python 3.12 virtualenv outside the repo).
By default ours runs on the anchor's interpreter too, from a virtualenv of its own next to the anchor's."""

from __future__ import annotations

import glob
import hashlib
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
CACHE = Path(os.environ.get("OAC_BENCH_CACHE", Path.home() / ".cache" / "oac-bench"))
ANCHOR_REQUIREMENT = "open-agent-compiler==1.16.5"
ANCHOR_VERSION = "1.16.5"


@dataclass(frozen=True)
class Implementation:
    label: str  # "ours" | "anchor"
    oac: Path
    python: Path
    version: str

    def describe(self) -> str:
        return f"{self.label}: {self.oac} (oac {self.version}, {python_version(self.python)})"


def python_version(python: Path) -> str:
    done = subprocess.run([str(python), "-c", "import platform; print(platform.python_version())"],
                          capture_output=True, text=True)
    return f"Python {done.stdout.strip() or '?'}"


def _package_version(python: Path) -> str | None:
    done = subprocess.run(
        # ours is distributed as oac-toolkit, the public package as open-agent-compiler; one of them is installed
        [str(python), "-c", "import importlib.metadata as m\n"
         "for name in ('oac-toolkit', 'open-agent-compiler'):\n"
         "    try:\n        print(m.version(name)); break\n    except m.PackageNotFoundError:\n        pass"],
        capture_output=True, text=True,
    )
    return done.stdout.strip() if done.returncode == 0 else None


def find_ours(explicit: str | None = None) -> Implementation:
    """`--ours-oac`, else the `oac` next to the running interpreter, else the repository's `.venv/bin/oac`."""
    candidates = [Path(explicit)] if explicit else [Path(sys.executable).parent / "oac", REPO / ".venv" / "bin" / "oac"]
    for oac in candidates:
        if oac.is_file():
            python = oac.parent / "python"
            version = _package_version(python) or "?"
            return Implementation("ours", oac, python, version)
    raise SystemExit(f"benchmark: cannot find our oac (tried {', '.join(map(str, candidates))}); "
                     "install it with `.venv/bin/pip install -e '.[test]'` or pass --ours-oac")


def ensure_ours_on(interpreter: Path) -> Implementation:
    """This repository's package, installed editable into a virtualenv made with `interpreter` (the anchor's), so
    both implementations run on one Python: ours on 3.11 against the anchor on 3.12 read ~5-8 % faster than ours
    on 3.12 (warm, 5,000 tests). Created once per checkout (idempotent); the source stays this checkout's."""
    venv = CACHE / f"ours-venv-{hashlib.sha256(str(REPO).encode()).hexdigest()[:10]}"
    python, source = venv / "bin" / "python", str(REPO / "src")
    found = _installed_from(python)
    if found != (python_version(interpreter), source):
        print(f"benchmark: installing this checkout into {venv} ({interpreter})", flush=True)
        subprocess.run([str(interpreter), "-m", "venv", "--clear", str(venv)], check=True)
        subprocess.run([str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", "-e",
                        str(REPO)], check=True)
        found = _installed_from(python)
    if found is None or found[1] != source:
        raise SystemExit(f"benchmark: {venv} does not import this checkout's package (found {found})")
    return Implementation("ours", venv / "bin" / "oac", python, _package_version(python) or "?")


def _installed_from(python: Path) -> tuple[str, str] | None:
    """(the venv's Python version, the directory its `open_agent_compiler` is imported from), or None."""
    if not python.is_file():
        return None
    done = subprocess.run([str(python), "-c", "import os, open_agent_compiler as p; "
                           "print(os.path.dirname(os.path.dirname(os.path.realpath(p.__file__))))"],
                          capture_output=True, text=True)
    if done.returncode != 0:
        return None
    return python_version(python), done.stdout.strip()


def precompile(impl: Implementation) -> None:
    """Write the bytecode of the implementation's package, as an installed package has it (pip compiles at
    install; an editable checkout gets it on first import). Without this, a caller's PYTHONDONTWRITEBYTECODE
    made every one of our runs compile our source again while the anchor loaded its cached bytecode."""
    subprocess.run([str(impl.python), "-c",
                    "import compileall, os, open_agent_compiler as p; "
                    "compileall.compile_dir(os.path.dirname(p.__file__), quiet=1)"], check=True)


def find_python312(explicit: str | None = None) -> Path:
    """The first Python 3.12 that really runs: pyenv's versions, then PATH (a pyenv shim there may exit 127)."""
    if explicit:
        return Path(explicit)
    pyenv_root = Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv"))
    candidates = sorted(glob.glob(str(pyenv_root / "versions" / "3.12*" / "bin" / "python")), reverse=True)
    candidates += [c for c in (shutil.which("python3.12"),) if c]
    for candidate in candidates:
        probe = subprocess.run([candidate, "-c", "import sys; assert sys.version_info[:2] == (3, 12)"],
                               capture_output=True, timeout=60)
        if probe.returncode == 0:
            return Path(candidate)
    raise SystemExit(f"benchmark: no Python 3.12 that runs (tried: {', '.join(candidates) or 'none found'}); "
                     "pass --anchor-python")


def ensure_anchor(venv: Path | None = None, python312: str | None = None) -> Implementation:
    """Create `venv` and install the anchor into it unless it is already there (idempotent)."""
    venv = venv or CACHE / "anchor-venv"
    python = venv / "bin" / "python"
    installed = _package_version(python) if python.is_file() else None
    if installed != ANCHOR_VERSION:
        interpreter = find_python312(python312)
        print(f"benchmark: installing {ANCHOR_REQUIREMENT} into {venv} ({interpreter})", flush=True)
        subprocess.run([str(interpreter), "-m", "venv", "--clear", str(venv)], check=True)
        subprocess.run([str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
                        ANCHOR_REQUIREMENT], check=True)
    version = _package_version(python)
    if version != ANCHOR_VERSION:
        raise SystemExit(f"benchmark: anchor venv {venv} holds open-agent-compiler {version}, not {ANCHOR_VERSION}")
    return Implementation("anchor", venv / "bin" / "oac", python, version)
