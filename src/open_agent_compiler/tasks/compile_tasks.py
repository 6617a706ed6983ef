"""Compilation into a project as doit tasks: `task_compile` for a user's dodo.py, and `oac compile` through it.

One task per (config, dialect, target) listed in pyproject.toml::

    [tool.oac]
    factory = "agents:registry"

    [[tool.oac.compile]]
    config = "prod"
    dialect = "opencode"   # default "opencode"
    target = "."           # default the project root

Each task is named by its target as resolved (relative to the project root when inside it). Its `file_dep` is
every source file the compile reads — the project's modules loaded while the factory ran (files under the project
root, not in a virtualenv or site-packages), the files user code read meanwhile (see `usercode.reads`: a prompt
the factory reads) and the script sources it copies —, its `targets` are the files it writes, and it is up to date
only while the compiler's code and the compiled bytes are those it last wrote, so `doit compile` does nothing
when nothing changed. When it runs, the
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

import xxhash
from doit.cmd_base import TaskLoader2
from doit.doit_cmd import DoitMain
from doit.exceptions import TaskFailed
from doit.loader import generate_tasks
from pydantic import BaseModel, ConfigDict, ValidationError

from open_agent_compiler.compiler.scripts import check_script_targets
from open_agent_compiler.compiler.dialects import DEFAULT_DIALECT, get_dialect
from open_agent_compiler.compiler.output import CompiledOutput
from open_agent_compiler.compiler.writer import WriteReport, write_output
from open_agent_compiler.errors import OacError
from open_agent_compiler.model.factory import load_registry
from open_agent_compiler.model.hashing import digest, digest_bytes, source_fingerprint
from open_agent_compiler.model.registry import ResolvedConfig
from open_agent_compiler.tasks.file_checker import OacFileChecker
from open_agent_compiler.tasks.settings import STATE_DB, STATE_DIR, pyproject_settings
from open_agent_compiler.usercode import project_imports, reads
from open_agent_compiler.usercode.project_imports import LINK_MARK, STAT_MARK

COMPILE_GROUP = "compile"
NOT_FILES = ("/", LINK_MARK, STAT_MARK)  # discovered paths no file_dep can stand for: listings, checks, links
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
        self.file_dep = sorted(path for path in set(sources) | scripts if not path.endswith(NOT_FILES))
        self.where = Path(os.path.abspath(entry.target))  # a relative target is relative to the working directory
        contents = self.output.file_map()
        self.targets = [str(self.where / path) for path in sorted(contents)]
        self.compiled = digest([(path, digest_bytes(data)) for path, data in sorted(contents.items())])
        self.reports: list[WriteReport] = []
        self.error: OacError | None = None
        self.adopt = False  # `oac compile --adopt`: take over files at compiled paths that oac did not write
        self.factory = ""  # the factory spec it was planned from (saved for `oac compile`'s up-to-date check)
        self.listed: list[str] = []

    @property
    def name(self) -> str:
        return compile_task_name(self.root, self.entry)

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
            "uptodate": [CompilerUnchanged(), CompiledUnchanged(self.compiled)],
            "verbosity": 0,
        }


def compile_task_name(root: Path, entry: CompileEntry) -> str:
    """The doit task name of an entry (without the group), by its target as resolved (relative to the project
    root when inside it), never as typed: the same folder is one task, and `out` typed in a subfolder is not the
    project's `out`. `oac compile` finds its saved state by it."""
    where = Path(os.path.abspath(entry.target))  # a relative target is relative to the working directory
    try:
        label = where.relative_to(root).as_posix()
    except ValueError:
        label = where.as_posix()
    raw = f"{entry.config}:{entry.dialect}:{label}"
    safe = _UNSAFE.sub("_", raw)
    return safe if safe == raw else f"{safe}~{xxhash.xxh32_hexdigest(raw.encode('utf-8', 'surrogatepass'))}"


class CompilerUnchanged:
    """Up to date only while the compiler's own code is the one that wrote the files."""

    __signature__ = _TASK_VALUES

    def __call__(self, task: Any, values: dict[str, Any]) -> bool:
        return values.get("compiler") == compiler_fingerprint()


class CompiledUnchanged:
    """Up to date only while the files last written are these bytes (a factory may read what no file_dep names)."""

    __signature__ = _TASK_VALUES

    def __init__(self, compiled: str) -> None:
        self.compiled = compiled

    def __call__(self, task: Any, values: dict[str, Any]) -> bool:
        return values.get("compiled") == self.compiled


def compiler_fingerprint() -> str:
    return source_fingerprint("model", "compiler")


def _write_action(job: CompileJob, clean: bool, task: Any) -> TaskFailed | None:
    failed = job.write(clean)
    if failed is None and not clean:
        task.values.update(compiler=compiler_fingerprint(), compiled=job.compiled, **saved_state(job))
    return failed


def saved_state(job: CompileJob) -> dict[str, Any]:
    """What the next `oac compile` of this entry needs to find it up to date without loading the factory: the
    factory, the files the compile read, each output's stamp (size, mtime) as this compile left it, the report
    and the warnings."""
    report = job.reports[-1]
    where = Path(os.path.abspath(job.target))
    paths = [*report.written, *report.unchanged, *(kept.path for kept in report.kept)]
    return {"factory": job.factory, "file_dep": job.file_dep, "stamps": {rel: _stamp(where / rel) for rel in paths},
            "listings": {folder: _listing(folder) for folder in job.listed},
            "report": report.model_dump(mode="json"), "warnings": list(job.output.warnings)}


def _listing(folder: str) -> str | None:
    """The names in a folder user code listed while the factory ran (a read no `file_dep` can stand for); for an
    existence check (`?`) whether it exists, its kind and mode; for a link read through (`@`) where it points."""
    if folder.endswith(STAT_MARK):
        return reads.stat_digest_input(folder[:-1])
    if folder.endswith(LINK_MARK):
        return reads.link_digest_input(folder[:-1])
    try:
        return digest_bytes("\0".join(sorted(os.listdir(folder))).encode("utf-8", "surrogateescape"))
    except OSError:
        return None


def _stamp(path: Path) -> list[int] | None:
    try:
        found = os.lstat(path)
    except OSError:
        return None
    return [found.st_mode, found.st_size, found.st_mtime_ns]


class OutputsUnchanged:
    """Up to date only for the same factory, and while every output is as the compile left it (one lstat each:
    mode, size and mtime), so a file edited, replaced or deleted since is compiled (and reported) again."""

    __signature__ = _TASK_VALUES

    def __init__(self, factory: str, target: Path) -> None:
        self.factory = factory
        self.where = Path(os.path.abspath(target))

    def __call__(self, task: Any, values: dict[str, Any]) -> bool:
        stamps, listings = values.get("stamps"), values.get("listings")
        return (values.get("factory") == self.factory and isinstance(stamps, dict) and isinstance(listings, dict)
                and all(_stamp(self.where / rel) == stamp for rel, stamp in stamps.items())
                and all(_listing(folder) == listed for folder, listed in listings.items()))


class SavedCompile:
    """An entry for `oac compile` as its last compile left it: doit checks the files it read (`file_dep`) and
    our `uptodate` checks; when nothing changed that check is all that runs (no factory, no rendering, no
    read-back). When doit runs the task, its action plans the entry (a `CompileJob`) and writes it, and the
    task's `file_dep` become the ones this compile read (what doit saves)."""

    def __init__(self, root: Path, factory: str, entry: CompileEntry, saved: dict[str, Any]) -> None:
        self.root, self.factory, self.entry, self.saved = root, factory, entry, saved
        self.job: CompileJob | None = None
        self.error: OacError | None = None

    @property
    def name(self) -> str:
        return compile_task_name(self.root, self.entry)

    def task(self) -> dict[str, Any]:
        deps = self.saved.get("file_dep")
        deps = deps if isinstance(deps, list) else []
        present = [dep for dep in deps if isinstance(dep, str) and os.path.isfile(dep)]
        return {
            "name": self.name,
            "doc": f"compile config {self.entry.config!r} for {self.entry.dialect} into {self.entry.target}",
            "actions": [(_saved_action, [self])],
            "file_dep": present,  # a dep gone since: a different set than saved, so doit runs the task
            "uptodate": [CompilerUnchanged(), OutputsUnchanged(self.factory, self.entry.target)],
            "verbosity": 0,
        }

    def reports(self) -> list[WriteReport]:
        if self.job is not None:
            return self.job.reports
        report = WriteReport.model_validate(self.saved["report"])  # up to date: every output as it was left
        unchanged = tuple(dict.fromkeys([*report.written, *report.unchanged]))
        return [report.model_copy(update={"written": (), "removed": (), "adopted": (), "unchanged": unchanged,
                                          "target": str(self.entry.target)})]  # as given this time

    def warnings(self) -> list[str]:
        return list(self.job.output.warnings) if self.job is not None else list(self.saved.get("warnings") or [])


def _saved_action(saved: SavedCompile, task: Any) -> TaskFailed | None:
    try:
        saved.job = plan_jobs(saved.root, saved.factory, [saved.entry])[0]
    except OacError as exc:
        saved.error = exc
        return TaskFailed(str(exc))
    task.file_dep = set(saved.job.file_dep)
    failed = _write_action(saved.job, False, task)
    saved.error = saved.job.error
    return failed


_saved_action.__signature__ = inspect.signature(_saved_action)  # type: ignore[attr-defined]


_write_action.__signature__ = inspect.signature(_write_action)  # type: ignore[attr-defined]


def project_sources(root: Path) -> list[str]:
    """Project files loaded so far (the factory's modules and what they import) and the files user code read
    while loading (a prompt the factory reads); folders whose listing was read end in "/"."""
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
        check_script_targets(resolved)  # before doit opens its state file: a bad name writes nothing
        job = CompileJob(root, entry, resolved, project_sources(root))
        job.factory = factory
        job.listed = [path for path in project_sources(root) if path.endswith(NOT_FILES)]  # listings, checks, links
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


class _SavedLoader(TaskLoader2):
    """The entries' tasks built from the state doit saved for them (read through doit's dep manager)."""

    def __init__(self, root: Path, factory: str, entries: list[CompileEntry]) -> None:
        super().__init__()
        self.root, self.factory, self.entries = root, factory, entries
        self.saved: list[SavedCompile] = []

    def load_doit_config(self) -> dict[str, Any]:
        return _JobLoader.load_doit_config(self)  # type: ignore[arg-type]

    def load_tasks(self, cmd: Any, pos_args: list[str]) -> list[Any]:
        values = cmd.dep_manager.get_values
        self.saved = [SavedCompile(self.root, self.factory, entry,
                                   values(f"{COMPILE_GROUP}:{compile_task_name(self.root, entry)}"))
                      for entry in self.entries]
        return generate_tasks(COMPILE_GROUP, (saved.task() for saved in self.saved), "oac compile")


def compile_entries_through_doit(factory: str, entries: Sequence[CompileEntry], *, clean: bool = False,
                                 adopt: bool = False, root: Path | None = None,
                                 warnings: list[str] | None = None) -> list[WriteReport]:
    """`oac compile`: the same tasks `doit compile` runs (state shared), one report per entry, the compile's
    warnings added to `warnings`; the entries of the command line, or every [[tool.oac.compile]]. Bad input raises
    OacError.

    Once the project has doit state, an entry's task comes from what its last compile saved: unchanged, it is
    doit's up-to-date check and nothing more. The first compile (no state yet: bad input is refused before
    anything is written), `--clean` and `--adopt` plan every entry first and always execute."""
    from open_agent_compiler.tasks.run import BACKEND_LOCATION, BACKEND_NAME
    root = (root or Path.cwd()).resolve()
    entries = list(entries)
    if not clean and not adopt and (root / STATE_DIR / STATE_DB).is_file():
        loader = _SavedLoader(root, factory, entries)
        main = DoitMain(loader, config_filenames=(), extra_config={"BACKEND": {BACKEND_NAME: BACKEND_LOCATION}})
        code = main.run(["run"] + [f"{COMPILE_GROUP}:{compile_task_name(root, entry)}" for entry in entries])
        for saved in loader.saved:
            if saved.error is not None:
                raise saved.error
        if code not in (0, None) or len(loader.saved) != len(entries):
            raise OacError(f"compile failed (doit exit {code})")
        if warnings is not None:
            warnings.extend(w for saved in loader.saved for w in saved.warnings())
        return [report for saved in loader.saved for report in saved.reports()]
    jobs = plan_jobs(root, factory, entries)
    if warnings is not None and not clean:
        warnings.extend(w for job in jobs for w in job.output.warnings)
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
