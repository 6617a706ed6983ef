"""Options of a test run, from the command line or from `[tool.oac]` in pyproject.toml."""

import os
import tomllib
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from open_agent_compiler.errors import OacError

STATE_DIR = ".oac"
STATE_DB = "doit-state.sqlite3"


class TestOptions(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")
    __test__ = False

    factory: str
    config: str
    project_root: Path = Path(".")
    dialect: str = "opencode"
    results: Path = Path(STATE_DIR) / "test_results.jsonl"
    force: bool = False
    filter: str | None = None
    kind: str | None = None
    variant: str | None = None
    jobs: int = 1
    timeout: float = 60.0
    hermetic: bool = False
    junit: Path | None = None
    explain: bool = False
    verbose: bool = False

    @property
    def root(self) -> Path:
        return self.project_root.resolve()

    @property
    def state_dir(self) -> Path:
        return self.root / STATE_DIR

    @property
    def state_db(self) -> Path:
        return self.state_dir / STATE_DB

    @property
    def results_path(self) -> Path:
        return self.results if self.results.is_absolute() else self.root / self.results

    @property
    def build_dir(self) -> Path:
        return self.state_dir / "build" / self.config / self.dialect


def pyproject_settings(root: Path) -> dict[str, Any]:
    """`[tool.oac]` of `root/pyproject.toml`, or {} when there is none."""
    path = root / "pyproject.toml"
    if not path.is_file():
        return {}
    try:
        with open(path, "rb") as handle:
            data = tomllib.load(handle)
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise OacError(f"cannot read {path}: {exc}") from None
    section = data.get("tool", {}).get("oac", {})
    if not isinstance(section, dict):
        raise OacError(f"{path}: [tool.oac] must be a table")
    return {key.replace("-", "_"): value for key, value in section.items()}


def build_options(root: Path, overrides: dict[str, Any]) -> TestOptions:
    """Command-line values win over `[tool.oac]`; OAC_HERMETIC=1 turns hermetic mode on."""
    values = pyproject_settings(root)
    values.pop("compile", None)  # [[tool.oac.compile]]: the compile tasks' entries (tasks.compile_tasks)
    values.update({k: v for k, v in overrides.items() if v is not None})
    if os.environ.get("OAC_HERMETIC", "") not in ("", "0"):
        values["hermetic"] = True
    values.setdefault("project_root", root)
    for required in ("factory", "config"):
        if not values.get(required):
            where = "FACTORY argument" if required == "factory" else "--config"
            raise OacError(f"no {required} given: pass {where} or set {required} in [tool.oac] of pyproject.toml")
    try:
        return TestOptions(**values)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise OacError(f"bad test option {where!r}: {first['msg']}") from None
