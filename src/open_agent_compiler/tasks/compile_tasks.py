"""Compilation into a project as doit tasks: `task_compile` for a user's dodo.py, and `oac compile` through it.

One task per (config, dialect, target) listed in pyproject.toml::

    [tool.oac]
    factory = "agents:registry"

    [[tool.oac.compile]]
    config = "prod"
    dialect = "opencode"   # default "opencode"
    target = "."           # default the project root

Each task's `file_dep` is every source file the compile reads — the project's modules loaded while the factory
ran (files under the project root, not in a virtualenv or site-packages) and the script sources it copies — and
its `targets` are the files it writes, so `doit compile` does nothing when nothing changed. When it runs, the
writer rewrites only files whose bytes changed; `doit clean compile` takes back what it wrote (the writer's
manifest decides: never a user's file).
"""

import contextlib
import inspect
import io
import os
import re
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from doit.cmd_base import TaskLoader2
from doit.doit_cmd import DoitMain
from doit.exceptions import TaskFailed
from doit.loader import generate_tasks
from pydantic import BaseModel, ConfigDict, ValidationError

from open_agent_compiler.compiler.dialects import DEFAULT_DIALECT, get_dialect
from open_agent_compiler.compiler.output import CompiledOutput
from open_agent_compiler.compiler.writer import WriteReport, write_output
from open_agent_compiler.errors import OacError
from open_agent_compiler.model.factory import load_registry
from open_agent_compiler.model.hashing import source_fingerprint
from open_agent_compiler.model.registry import ResolvedConfig
from open_agent_compiler.tasks.file_checker import OacFileChecker
from open_agent_compiler.tasks.settings import STATE_DB, STATE_DIR, pyproject_settings
from open_agent_compiler.testing import project_imports

COMPILE_GROUP = "compile"
_UNSAFE = re.compile(r"[^A-Za-z0-9_.:/@+-]")
_TASK_VALUES = inspect.Signature([inspect.Parameter(n, inspect.Parameter.POSITIONAL_OR_KEYWORD)
                                  for n in ("task", "values")])


class CompileEntry(BaseModel):
    """One `[[tool.oac.compile]]` entry."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    config: str
    dialect: str = DEFAULT_DIALECT
    target: Path = Path(".")


class CompileJob:
    """One entry, compiled in memory at planning time: what it reads, what it writes, what it reports."""

    def __init__(self, root: Path, entry: CompileEntry, resolved: ResolvedConfig, sources: list[str]) -> None:
        self.root = root
        self.entry = entry
        self.target = entry.target  # as given (relative to the project root, the working directory): as reported
        get_dialect(entry.dialect)  # an unknown dialect is one clear line
        self.output: CompiledOutput = get_dialect(entry.dialect).compile(resolved, source_root=root)
        scripts = {str(root / s.source_file_path) for reachable in resolved.tools() for s in reachable.tool.scripts()
                   if s.source_file_path}
        self.file_dep = sorted(set(sources) | scripts)
        where = Path(os.path.abspath(entry.target))  # a relative target is relative to the working directory
        self.targets = [str(where / path) for path in sorted(self.output.file_map())]
        self.reports: list[WriteReport] = []
        self.error: OacError | None = None
        self.adopt = False  # `oac compile --adopt`: take over files at compiled paths that oac did not write

    @property
    def name(self) -> str:
        label = self.entry.target.as_posix()
        return _UNSAFE.sub("_", f"{self.entry.config}:{self.entry.dialect}:{label}")

    def write(self, clean: bool) -> TaskFailed | None:
        try:
            self.reports.append(write_output(self.output, self.target, dialect=self.entry.dialect, clean=clean,
                                             adopt=self.adopt))
        except OacError as exc:
            self.error = exc
            return TaskFailed(str(exc))
        return None

    def task(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "doc": f"compile config {self.entry.config!r} for {self.entry.dialect} into {self.entry.target}",
            "actions": [(_write_action, [self, False])],
            "clean": [(_write_action, [self, True])],
            "file_dep": self.file_dep,
            "targets": self.targets,
            "uptodate": [CompilerUnchanged()],
            "verbosity": 0,
        }


class CompilerUnchanged:
    """Up to date only while the compiler's own code is the one that wrote the files."""

    __signature__ = _TASK_VALUES

    def __call__(self, task: Any, values: dict[str, Any]) -> bool:
        return values.get("compiler") == compiler_fingerprint()


def compiler_fingerprint() -> str:
    return source_fingerprint("model", "compiler")


def _write_action(job: CompileJob, clean: bool, task: Any) -> TaskFailed | None:
    failed = job.write(clean)
    if failed is None and not clean:
        task.values["compiler"] = compiler_fingerprint()
    return failed


_write_action.__signature__ = inspect.signature(_write_action)  # type: ignore[attr-defined]


def project_sources(root: Path) -> list[str]:
    """Project files loaded so far (the factory's modules and what they import)."""
    return [path for path in project_imports.loaded_project_files() if Path(path).is_relative_to(root)]


def load_resolved(factory: str, root: Path, config: str) -> ResolvedConfig:
    project_imports.install(root)
    # load_registry turns SystemExit and any other BaseException of the factory (but Ctrl-C) into one line
    return load_registry(factory, str(root)).resolve_config(config)


def plan_jobs(root: Path, factory: str, entries: Sequence[CompileEntry]) -> list[CompileJob]:
    jobs = []
    claimed: set[str] = set()
    for entry in entries:
        resolved = load_resolved(factory, root, entry.config)
        job = CompileJob(root, entry, resolved, project_sources(root))
        # doit allows one task per target: a file two dialects write (a shared script) is listed by the first
        job.targets = [path for path in job.targets if path not in claimed]
        claimed.update(job.targets)
        jobs.append(job)
    return jobs


def entries_from_pyproject(root: Path) -> tuple[str, list[CompileEntry]]:
    section = pyproject_settings(root)
    factory = section.get("factory")
    raw = section.get("compile", [])
    if not isinstance(raw, list) or not all(isinstance(item, dict) for item in raw):
        raise OacError("[tool.oac] compile must be a list of tables: [[tool.oac.compile]] config = ...")
    if raw and not isinstance(factory, str):
        raise OacError("[[tool.oac.compile]] needs factory = 'module:callable' in [tool.oac]")
    try:
        entries = [CompileEntry(**item) for item in raw]
    except ValidationError as exc:
        first = exc.errors()[0]
        raise OacError(f"bad [[tool.oac.compile]] entry {'.'.join(map(str, first['loc']))!r}: {first['msg']}") from None
    return str(factory or ""), entries


def task_compile() -> Iterator[dict[str, Any]]:
    """compile every [[tool.oac.compile]] entry of pyproject.toml into its target"""
    root = Path.cwd().resolve()
    try:
        factory, entries = entries_from_pyproject(root)
        jobs = plan_jobs(root, factory, entries)
    except OacError as exc:
        print(f"oac: {exc}", file=sys.stderr)
        raise SystemExit(2) from None
    for job in jobs:
        yield job.task()


class _JobLoader(TaskLoader2):
    def __init__(self, jobs: list[CompileJob], root: Path) -> None:
        super().__init__()
        self.jobs = jobs
        self.root = root

    def load_doit_config(self) -> dict[str, Any]:
        return {"dep_file": str(self.root / STATE_DIR / STATE_DB), "backend": "oac", "verbosity": 0,
                "check_file_uptodate": OacFileChecker, "reporter": "zero", "continue": True}

    def load_tasks(self, cmd: Any, pos_args: list[str]) -> list[Any]:
        return generate_tasks(COMPILE_GROUP, (job.task() for job in self.jobs), "oac compile")


def compile_through_doit(factory: str, config: str, dialects: Sequence[str], target: Path, *,
                         clean: bool = False, adopt: bool = False, root: Path | None = None) -> list[WriteReport]:
    """`oac compile`: the same tasks `doit compile` runs (state shared), always executed so every file is
    checked and reported; returns one report per dialect. Bad input raises OacError."""
    entries = [CompileEntry(config=config, dialect=d, target=target) for d in dialects]
    return compile_entries_through_doit(factory, entries, clean=clean, adopt=adopt, root=root)


def compile_entries_through_doit(factory: str, entries: Sequence[CompileEntry], *, clean: bool = False,
                                 adopt: bool = False, root: Path | None = None) -> list[WriteReport]:
    """`compile_through_doit` for any entries (`oac compile` with no arguments: every [[tool.oac.compile]])."""
    from open_agent_compiler.tasks.run import BACKEND_LOCATION, BACKEND_NAME
    root = (root or Path.cwd()).resolve()
    jobs = plan_jobs(root, factory, entries)
    for job in jobs:
        job.adopt = adopt
    argv = ["clean"] if clean else ["run", "--always-execute"]
    main = DoitMain(_JobLoader(jobs, root), config_filenames=(),
                    extra_config={"BACKEND": {BACKEND_NAME: BACKEND_LOCATION}})
    with contextlib.redirect_stdout(io.StringIO()):  # doit's clean names each action it runs: we print reports
        code = main.run(argv + [f"{COMPILE_GROUP}:{job.name}" for job in jobs])
    for job in jobs:
        if job.error is not None:
            raise job.error
    if code not in (0, None):  # doit's clean returns None
        raise OacError(f"compile failed (doit exit {code})")
    return [report for job in jobs for report in job.reports]
