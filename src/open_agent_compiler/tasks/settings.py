"""Options of a test run, from the command line or from `[tool.oac]` in pyproject.toml.

One validation for both sources: every value, typed on the command line or read from the table, goes through
`TestOptions` and its field constraints; an error names the flag or the file and key it came from.
"""

import os
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from open_agent_compiler.errors import OacError
# the project lookup needs no pydantic: it lives in tasks.project (`oac results` imports only that), named here too
from open_agent_compiler.tasks.project import PYPROJECT, STATE_DIR, ProjectSettings, find_project  # noqa: F401

STATE_DB = "doit-state.sqlite3"
# keys of [tool.oac] that only `oac compile` reads; `oac test` accepts and ignores them
COMPILE_ONLY_KEYS = ("target", "compile")  # [[tool.oac.compile]]: the compile tasks' entries (tasks.compile_tasks)
_FLAGS = {"factory": "FACTORY argument", "jobs": "--jobs", "kind": "--kind", "filter": "--filter", "keyword": "-k",
          "markers": "-m"}


class TestOptions(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")
    __test__ = False

    factory: str = Field(min_length=1)
    config: str = Field(min_length=1)
    project_root: Path = Path(".")
    dialect: str = Field(default="opencode", min_length=1)
    results: Path = Path(STATE_DIR) / "test_results.jsonl"
    force: bool = False
    # repeated --filter/--kind (or a list in [tool.oac]) combine: a test is selected if it matches any of them
    filter: tuple[str, ...] = ()
    kind: tuple[str, ...] = ()
    variant: str | None = None
    jobs: int = Field(default=1, ge=1, strict=True)  # strict: `jobs = true` in TOML is a mistake, not 1
    timeout: float = Field(default=60.0, gt=0, allow_inf_nan=False, strict=True)
    hermetic: bool = False
    strict: bool = False
    junit: Path | None = None
    explain: bool = False
    verbose: bool = False
    invoker: str | None = None  # NAME or module:factory (see testing.invokers.select)
    invoker_script: str | None = None  # module:attribute of the model scripts
    record: str | None = None  # --record MODE: agent tests' cassettes (testing.invokers.cassette)
    record_base_url: str | None = None  # the provider a recording proxies to (key only from the environment)
    record_model: str | None = None
    judge: str | dict[str, Any] | None = None  # module:factory, or a [tool.oac.judge] table
    # green state shared between machines (tasks.shared_store): postgresql://user@host/db, no password in it
    state: str | None = None
    project: str | None = Field(default=None, min_length=1)  # keeps projects apart in one shared database
    require_shared_state: bool = False  # the shared state unreachable or failing: exit 2 instead of going on

    @field_validator("state")
    @classmethod
    def _state_url(cls, value: str | None) -> str | None:
        if value is None or value in ("", "local", "sqlite"):
            return None
        from open_agent_compiler.tasks.shared_store import check_url

        return check_url(value)
    # selection like pytest (testing.selection): -k over ids, -m over tags, --last-failed, a shard of N
    keyword: str | None = None
    markers: str | None = None
    last_failed: bool = False
    shard: str | None = Field(default=None, pattern=r"^\s*[0-9]+\s*/\s*[0-9]+\s*$")
    shard_by: Literal["hash", "duration"] = "hash"
    pipeline: str | None = Field(default=None, pattern=r"^[\x21-\x7e]{1,200}$")  # else the CI's (tasks.pipeline)
    maxfail: int = Field(default=0, ge=0, strict=True)  # stop after this many failures (0: never; -x is 1)
    repeat: int = Field(default=1, ge=1, strict=True)  # run each selected test N times (tasks.repeats)
    flaky_as: Literal["pass", "fail"] = "fail"  # what a test that both passed and failed counts as
    durations: int | None = Field(default=None, ge=0, strict=True)  # list the N slowest (0: all)

    @field_validator("filter", "kind", mode="before")
    @classmethod
    def _one_or_many(cls, value: Any) -> Any:
        if value is None:
            return ()
        return (value,) if isinstance(value, str) else value

    @field_validator("factory", "config", "dialect", "variant", "filter", "kind")
    @classmethod
    def _valid_text(cls, value: Any) -> Any:
        """Names end up in keys, records and paths: undecodable bytes on the command line are refused here."""
        for text in (value,) if isinstance(value, str) else value or ():
            if isinstance(text, str) and not text.isascii():
                try:
                    text.encode("utf-8")
                except UnicodeEncodeError:
                    raise ValueError("must be valid UTF-8 text") from None
        return value

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
    def junit_path(self) -> Path | None:
        if self.junit is None:
            return None
        return self.junit if self.junit.is_absolute() else self.root / self.junit

    @property
    def build_dir(self) -> Path:
        return self.state_dir / "build" / self.config / self.dialect


def pyproject_settings(root: Path) -> dict[str, Any]:
    """`[tool.oac]` of the project `root` belongs to, or {} when there is none."""
    return dict(find_project(root).values)


def _absolute(value: Any, base: Path) -> Any:
    """A relative path given on the command line means relative to the current directory."""
    if isinstance(value, Path) and not value.is_absolute():
        return base / value
    return value


def build_options(start: Path, overrides: dict[str, Any]) -> TestOptions:
    """Command-line values win over `[tool.oac]`; OAC_HERMETIC=1 turns hermetic mode on. Paths from the table
    are relative to the project root; paths from the command line to `start` (the current directory)."""
    project = find_project(start)
    values = {k: v for k, v in project.values.items() if k not in COMPILE_ONLY_KEYS}
    given = {k: _absolute(v, Path(os.path.abspath(start))) for k, v in overrides.items() if v is not None and v != ()}
    values.update(given)
    table_dialect = project.values.get("dialect")
    if "dialect" not in given and isinstance(table_dialect, list):  # compile's list: test the first dialect
        first = table_dialect[0] if table_dialect else None
        values["dialect"] = first if first not in (None, "all") else TestOptions.model_fields["dialect"].default
    if given.get("judge") == "http" and isinstance(project.values.get("judge"), dict):
        values["judge"] = project.values["judge"]  # --judge http with a [tool.oac.judge] table: that table
    if os.environ.get("OAC_HERMETIC", "") not in ("", "0"):
        values["hermetic"] = True
    if os.environ.get("OAC_STATE_URL") and "state" not in given:  # the environment wins over the table
        values["state"] = os.environ["OAC_STATE_URL"]
    values.setdefault("project_root", project.root)
    for required in ("factory", "config"):
        if not values.get(required):
            where = "FACTORY argument" if required == "factory" else "--config"
            raise OacError(f"no {required} given: pass {where} or set {required} in [tool.oac] of pyproject.toml")
    try:
        options = TestOptions(**values)
    except ValidationError as exc:
        raise OacError(describe_error(exc, given, project)) from None
    from open_agent_compiler.tasks.state_paths import check_state_paths  # it needs TestOptions: no cycle

    check_state_paths(options)
    return options


def describe_error(exc: ValidationError, given: dict[str, Any], project: ProjectSettings) -> str:
    """One line: which option, where it came from, what is wrong with it."""
    first = exc.errors()[0]
    loc = [str(p) for p in first["loc"]]
    key = loc[0] if loc else "?"
    if first["type"] == "extra_forbidden":
        known = ", ".join(sorted([*TestOptions.model_fields, *COMPILE_ONLY_KEYS]))
        return f"{project.where(key)}: unknown key (known: {known})"
    source = (_FLAGS.get(key, "--" + key.replace("_", "-")) if key in given
              else project.where(key) if key in project.values else key)
    got = first.get("input")
    shown = f" (got {got!r})" if not isinstance(got, dict) else ""
    return f"bad test option {source}: {first['msg']}{shown}"
