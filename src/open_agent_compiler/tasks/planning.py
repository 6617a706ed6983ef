"""Planning a test run as a short pipeline of named steps, each readable and testable alone:

    load → discover → compile → key → tasks (`graph.TestPlan.task_dicts`)

Only `compile` and `key` touch caches (the render memo, the key cache, the state DB's discovered imports), and
they do it at their edges: read before, write after, never in the middle of the computation.
"""

import sys
import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict

from open_agent_compiler.compiler.scripts import check_script_targets
from open_agent_compiler.errors import OacError
from open_agent_compiler.execution.deadline import Deadline, TimedOut
from open_agent_compiler.compiler.dialects import get_dialect
from open_agent_compiler.compiler.output import CompiledOutput
from open_agent_compiler.model.factory import load_registry
from open_agent_compiler.model.hashing import digest, digest_bytes
from open_agent_compiler.model.registry import ResolvedConfig
from open_agent_compiler.tasks.backend import saved_imports
from open_agent_compiler.tasks.memo_store import load_key_cache, load_memo, save_key_cache, save_memo, save_or_skip
from open_agent_compiler.tasks.settings import PYPROJECT, TestOptions
from open_agent_compiler.tasks.shared_session import SharedSession
from open_agent_compiler.tasks.state_paths import on_state
from open_agent_compiler.usercode import project_imports
from open_agent_compiler.testing.discovery import TestCase, discover, select
from open_agent_compiler.testing.migration_notes import migration_notes
from open_agent_compiler.keys.key import (FILES_AT, FileDigests, KeyParts, discovered_path, factory_digest,
                                          forget_digests, key_parts)
from open_agent_compiler.history.log import read_records
from open_agent_compiler.testing.selection import last_failed, narrow, parse_shard, recorded_durations


T = TypeVar("T")


def bounded(options: TestOptions, what: str, function: Callable[..., T], *args: Any) -> T:
    """`function(*args)` — user code run at load time (factories, model scripts, judges, invokers) — bounded by
    the one deadline (`execution.deadline`) of the run's `--timeout`: past it, one line (exit 2)."""
    try:
        return Deadline(options.timeout).run(function, *args)
    except TimedOut:
        raise OacError(f"{what} timed out after {options.timeout:g}s while loading (waiting for something?)") \
            from None

def load(options: TestOptions) -> ResolvedConfig:
    """Import the factory (project modules from source, their imports recorded) and resolve the config."""
    project_imports.install(options.root)
    # load_registry turns SystemExit and any other BaseException of the factory (but Ctrl-C) into one line
    resolved = load_registry(options.factory, str(options.root)).resolve_config(options.config)
    check_script_targets(resolved)  # as `oac compile` does, before anything is written
    return resolved


def discover_tests(resolved: ResolvedConfig, options: TestOptions) -> list[TestCase]:
    return choose_tests(resolved, options)[0]


def choose_tests(resolved: ResolvedConfig, options: TestOptions) -> tuple[list[TestCase], list[str]]:
    """discover → --kind/--filter → -k/-m → --last-failed → --shard (each once per run); notes for the user (and
    where the run means something different from 1.16.5: `testing.migration_notes`)."""
    cases, notes = _choose_tests(resolved, options)
    return cases, notes + migration_notes(cases, resolved)


def _choose_tests(resolved: ResolvedConfig, options: TestOptions) -> tuple[list[TestCase], list[str]]:
    cases = select(discover(resolved), kind=options.kind, text=options.filter)
    if not (options.keyword or options.markers or options.last_failed or options.shard):
        return cases, []
    history = None
    if options.last_failed or options.shard_by == "duration":
        history = list(read_records(options.results_path))
    return narrow(cases, keyword=options.keyword, markers=options.markers,
                  failed=last_failed(history or [], options.config) if options.last_failed else None,
                  shard=parse_shard(options.shard) if options.shard else None,
                  durations=recorded_durations(history or [], options.config)
                  if options.shard_by == "duration" else None)


class Compiled(BaseModel):
    """One dialect's compiled output in memory, and the digests tests are keyed on."""

    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True, defer_build=True)  # warm runs use none

    # (the CompiledOutput itself is not kept: its files' bytes are `contents`, and nothing reads the rest again)
    contents: dict[str, bytes]
    key: str  # digest of every compiled file
    artifact_paths: dict[str, tuple[str, ...]]  # compiled agent name → the files its capabilities are read from
    artifact_digests: dict[str, str]

    def artifacts(self, agent: str) -> dict[str, bytes]:
        return {path: self.contents[path] for path in self.artifact_paths.get(agent, ()) if path in self.contents}


def compile_dialect(resolved: ResolvedConfig, options: TestOptions, needed: bool) -> Compiled:
    """Compile in memory when a test reads the output (unchanged agents come from the render memo)."""
    output = None
    if needed:
        memo_path = options.state_dir / "render-memo" / f"{options.dialect}.json"
        memo = load_memo(memo_path)
        # (its warnings are `oac compile`'s to print: a test run reads the files only)
        output = get_dialect(options.dialect).compile(resolved, source_root=options.root, memo=memo,
                                                      with_warnings=False)
        with on_state(memo_path, "write the cache"):
            save_or_skip(save_memo, memo_path, memo)
    return compiled_from(output, resolved, options.dialect)


def compiled_from(output: CompiledOutput | None, resolved: ResolvedConfig, dialect_name: str) -> Compiled:
    contents = output.file_map() if output is not None else {}
    paths: dict[str, tuple[str, ...]] = {}
    digests: dict[str, str] = {}
    if output is not None:
        dialect = get_dialect(dialect_name)
        for agent in resolved.agents:
            found = paths[agent.compiled_name] = dialect.capability_files(agent.compiled_name)
            digests[agent.compiled_name] = digest([(p, digest_bytes(contents[p])) for p in found if p in contents])
    key = digest([(path, digest_bytes(contents[path])) for path in sorted(contents)])
    # built from values made just above: validating them again would walk every compiled file's bytes once more
    return Compiled.model_construct(contents=contents, key=key, artifact_paths=paths, artifact_digests=digests)


class Keyer:
    """Computes a test's named key parts on first request (a warm run asks only for tests that run)."""

    def __init__(self, resolved: ResolvedConfig, cases: list[TestCase], compiled: Compiled, options: TestOptions,
                 discovered: dict[str, list[str]], *, invoker: str | None = None, judge: str | None = None) -> None:
        self.resolved = resolved
        self.by_id = {case.test_id: case for case in cases}
        self.compiled = compiled
        self.options = options
        self.discovered = discovered  # test id → project files its last pass loaded
        self.invoker = invoker  # who runs agent tests (testing.invokers), part of their keys
        self.judge = judge  # who judges llm_judge evaluators (testing.judges), part of those tests' keys
        self.files = FileDigests(options.root)
        self.factory = factory_digest(self.files)  # what the registry factory read (see KeyParts.factory)
        self._parts: dict[str, list[Any]] = {}  # test id → its KeyParts, packed (`KeyParts.packed`)

    def rekey(self, test_id: str, discovered: list[str]) -> None:
        self.discovered[test_id] = discovered
        self._parts.pop(test_id, None)

    def key_over(self, test_id: str, discovered: list[str]) -> str:
        """The test's key were its discovered files these; the plan's own keying of it is left as it was."""
        before = self.discovered.get(test_id), self._parts.get(test_id)
        self.rekey(test_id, discovered)
        try:
            return self.parts_of(test_id).key()
        finally:
            self.discovered.pop(test_id, None)
            self._parts.pop(test_id, None)
            if before[0] is not None:
                self.discovered[test_id] = before[0]
            if before[1] is not None:
                self._parts[test_id] = before[1]

    def forget_parts(self, test_id: str) -> None:
        """The test is recorded and saved: let its parts go (asked again, they are computed again, the same)."""
        self._parts.pop(test_id, None)

    def parts_of(self, test_id: str) -> KeyParts:
        packed = self._parts.get(test_id)
        if packed is not None:
            return KeyParts.unpacked(packed)
        options = self.options
        parts = key_parts(
            self.by_id[test_id], resolved=self.resolved, files=self.files,
            artifact_digests=self.compiled.artifact_digests, dialect=options.dialect, variant=options.variant,
            hermetic=options.hermetic, discovered=self.discovered.get(test_id, ()), invoker=self.invoker,
            judge=self.judge, factory=self.factory)
        self._parts[test_id] = parts.packed()
        return parts

    def view_of(self, test_id: str) -> dict[str, Any]:
        """`parts_of(test_id).json_view()`: the parts as saved for `--explain`, without unpacking held parts."""
        packed = self._parts.get(test_id)
        return KeyParts.packed_view(packed) if packed is not None else self.parts_of(test_id).json_view()

    def files_of(self, test_id: str) -> dict[str, str] | None:
        """The files part of a test keyed afresh in this run (None: its key came from the key cache)."""
        packed = self._parts.get(test_id)
        return packed[FILES_AT] if packed is not None else None


def discovered_imports(options: TestOptions, names: dict[str, str],
                       shared: SharedSession | None = None) -> dict[str, list[str]]:
    """test id → project files (absolute) its last pass loaded, from the state DB, else from the shared state's
    last pass (discovered files travel with the key); `names`: test id → task name."""
    saved = saved_imports(options.state_db)
    if shared is not None:
        for name in names.values():
            if name not in saved and (imports := shared.imports_of(name)) is not None:
                saved[name] = imports
    if not saved:
        return {}
    root = options.root
    return {test_id: [discovered_path(root, path) for path in saved[name]] for test_id, name in names.items()
            if name in saved}


def project_name(options: TestOptions) -> str:
    """The shared state's project: [tool.oac] project, else [project] name of the pyproject.toml, else the folder."""
    if options.project:
        return options.project
    try:
        with open(options.root / PYPROJECT, "rb") as handle:
            name = tomllib.load(handle).get("project", {}).get("name")
    except (OSError, tomllib.TOMLDecodeError, UnicodeDecodeError, AttributeError):
        name = None
    return name if isinstance(name, str) and name else options.root.name


def _named_in_pyproject(options: TestOptions) -> bool:
    try:
        with open(options.root / PYPROJECT, "rb") as handle:
            name = tomllib.load(handle).get("project", {}).get("name")
    except (OSError, tomllib.TOMLDecodeError, UnicodeDecodeError, AttributeError):
        return False
    return isinstance(name, str) and bool(name)


def shared_session(options: TestOptions, prefix: str) -> SharedSession | None:
    """The run's shared state, connecting and reading the outcomes of the tasks named `prefix`… in the
    background; `open` it with the planned tasks (None: the state is local only)."""
    if options.state is None:
        return None
    name = project_name(options)
    if not options.project and name == options.root.name and not _named_in_pyproject(options):
        # checkouts in differently named folders would share nothing, silently: said once, at the run's start
        print(f"oac: note: the shared state's project name {name!r} is this folder's name; set [tool.oac] "
              f"project (or [project] name) so that checkouts in other folders share it", file=sys.stderr)
    return SharedSession(options.state, name, options.state_db,
                         required=options.require_shared_state).start(prefix)


def test_keys(cases: list[TestCase], resolved: ResolvedConfig, compiled: Compiled, options: TestOptions,
              keyer: Keyer, cache_path: Path, shared: dict[str, dict[str, str]] | None = None,
              scopes: dict[str, str] | None = None) -> dict[str, str]:
    """test id → key: from the key cache where an agent's scope is unchanged, else computed. `shared`: scope →
    {test id → key} the shared state knows (`SharedSession.scoped_keys`), used where the local cache has no key;
    `scopes` receives test id → scope for every key that has one (pushed with its outcome)."""
    cache = load_key_cache(cache_path)
    seeded = set((shared or {}).keys() - cache.entries.keys())
    for scope, keys in (shared or {}).items():
        known = cache.entries.setdefault(scope, {})
        for test_id, key in keys.items():
            known.setdefault(test_id, key)
    keys = cache.keys(cases, resolved, compiled.artifact_digests, options.dialect,
                      (options.variant, options.hermetic), keyer.parts_of, pinned=set(keyer.discovered),
                      invoker=_with_cassettes(keyer.invoker, options.root, cases), judge=keyer.judge)
    for scope in seeded - cache.kept.keys():  # other branches' scopes: not this cache's (nor a reason to save it)
        del cache.entries[scope]
    if scopes is not None:
        scopes.update(cache.scope_of)
    with on_state(cache_path, "write the cache"):
        save_or_skip(save_key_cache, cache_path, cache)
    forget_digests()  # every test is keyed (issue 18: cold peak RSS)
    return keys


def _with_cassettes(invoker: str | None, root: Path, cases: list[TestCase]) -> str | None:
    """The key cache's scope for agent tests also names the cassettes they read (testing.invokers.cassette);
    cassettes still read from the old location are said once."""
    if invoker is None:
        return None
    from open_agent_compiler.testing.invokers.cassette import cassette_names  # only when agent tests run

    names, legacy = cassette_names(root, cases)
    if legacy:
        print(f"oac: note: {len(legacy)} cassette(s) read from the old location ({', '.join(legacy[:3])}"
              f"{', …' if len(legacy) > 3 else ''}); --record all writes each beside its test's definition",
              file=sys.stderr)
    return f"{invoker} cassettes={names}"
