"""Where the project is: the folder of the first pyproject.toml upwards holding a `[tool.oac]` table, and that
table's values (validated by `tasks.settings` where a command needs them). Imports no pydantic and no doit: `oac
results` and `oac report` look the project up through this alone (pydantic's import is ~0.15-0.25 s of CPU)."""

import os
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from open_agent_compiler.errors import OacError

STATE_DIR = ".oac"
PYPROJECT = "pyproject.toml"


@dataclass(frozen=True)
class ProjectSettings:
    """Where the project is (the folder of the pyproject.toml holding `[tool.oac]`, else the start folder)
    and that table's values."""

    root: Path
    pyproject: Path | None = None
    values: dict[str, Any] = field(default_factory=dict)

    def where(self, key: str) -> str:
        return f"[tool.oac] {key} in {self.pyproject}"


def _oac_table(path: Path) -> dict[str, Any] | None:
    """`[tool.oac]` of one pyproject.toml, or None when it has no such table."""
    try:
        with open(path, "rb") as handle:
            data = tomllib.load(handle)
    except (OSError, tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise OacError(f"cannot read {path}: {exc}") from None
    tool = data.get("tool")
    if tool is None:
        return None
    if not isinstance(tool, dict):
        raise OacError(f"{path}: 'tool' must be a table ([tool.oac]), not {type(tool).__name__}")
    section = tool.get("oac")
    if section is None:
        return None
    if not isinstance(section, dict):
        raise OacError(f"{path}: [tool.oac] must be a table, not {type(section).__name__}")
    return {key.replace("-", "_"): value for key, value in section.items()}


def find_project(start: Path) -> ProjectSettings:
    """Look upwards from `start` for the first pyproject.toml with a `[tool.oac]` table, as pytest and ruff
    look for their own table; stop after a folder holding `.git` (the repository root) or at the filesystem
    root. Found: that folder is the project root. Not found: `start` is, with no settings."""
    start = Path(os.path.abspath(start))
    for folder in (start, *start.parents):
        candidate = folder / PYPROJECT
        if candidate.is_file():
            table = _oac_table(candidate)
            if table is not None:
                return ProjectSettings(root=folder, pyproject=candidate, values=table)
        if (folder / ".git").exists():
            break
    return ProjectSettings(root=start)
