"""A test's key: a digest over everything that can change its result, kept as named parts so that
`--explain` can say which one changed."""

import os
import sys
from collections.abc import Callable, Sequence
from operator import itemgetter
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from open_agent_compiler.execution import zygote
from open_agent_compiler.model.core.base import SharedFieldsSet, unvalidated
from open_agent_compiler.model.core.mock import MockResponse
from open_agent_compiler.model.core.test_model import AgentTest
from open_agent_compiler.model.core.tool import ToolDefinition
from open_agent_compiler.model.hashing import digest, digest_bytes, digest_dumped, digest_model, source_fingerprint
from open_agent_compiler.model.registry import ResolvedConfig
from open_agent_compiler.model.resource_handle import RESOURCES_ENV
from open_agent_compiler.testing.discovery import TestCase
from open_agent_compiler.testing.judges import uses_judge
from open_agent_compiler.usercode import project_imports, reads
from open_agent_compiler.usercode.project_imports import CHANGED_MARK, LINK_MARK, STAT_MARK
from open_agent_compiler.testing.mocks import mock_source_files, reachable_mock_entries, resolve_mock

# Bump when the meaning of a result changes (result schema, evaluator semantics): every green test re-runs.
ENGINE_SCHEMA = "oac-results/2"  # 2: tool tests hold outputs to the JSON tool's schemas
# What decides a result: definitions, read-backs, runners, evaluators, how handlers run, the record, the key
# itself, and how user code is loaded and watched
JUDGING_CODE = ("model", "compiler", "execution", "history", "testing", "keys", "usercode")


def engine_schema() -> str:
    """The schema version and a digest of the code that judges tests (read once per process): a pass earned by
    another version of the read-back or the evaluators is not a pass for this one. One string for every key's
    parts, interned (5,000 copies of it were 0.45 MB of a cold run)."""
    return sys.intern(f"{ENGINE_SCHEMA}+{source_fingerprint(*JUDGING_CODE)}")


class FileDigests:
    """Content digests of files, each file read once per run; also remembers, per run, where each callable
    mock's module was found and how each path is labelled."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._root_text = str(root.resolve())
        self._under_root = os.path.join(self._root_text, "")  # (with one trailing separator, "/" as it is)
        self._cache: dict[str, str] = {}
        self._by_name: dict[str, str] = {}
        self._labels: dict[str, str] = {}
        self._full: dict[str, str] = {}
        self.module_files: dict[str, list[Path]] = {}  # module name → files importing it runs
        self._run = os.urandom(6).hex()  # what a file changed during a test's run is keyed on, this run only

    def _resolved(self, key: str) -> str:
        """`(root / key).resolve()` as text, once per path a run: `os.path.realpath` is what `Path.resolve` calls,
        without pathlib's objects around it (100 handler tests' files, labelled and read: 11.9 → 1.8 ms on 3.12)."""
        full = self._full.get(key)
        if full is None:
            full = self._full[key] = os.path.realpath(os.path.join(self.root, key))
        return full

    def __call__(self, path: str | Path) -> str:
        """A file's content digest; a path ending in "/" is a folder whose list of names was read."""
        key = str(path)
        cached = self._by_name.get(key)
        if key.endswith(CHANGED_MARK):  # never equal to the next run's value: the test runs again
            return f"changed while the test ran ({self._run})"
        if cached is None and key.endswith((LINK_MARK, STAT_MARK)):  # (never cached across the run: cheap, rare)
            plain = os.path.join(self.root, key[:-1])
            if key.endswith(LINK_MARK):
                return "link:" + reads.link_digest_input(plain) + ":" + self(key[:-1])
            return "stat:" + reads.stat_digest_input(plain)
        if cached is None:
            folder = key.endswith("/")
            full = self._resolved(key)
            cached = self._cache.get(full) if not folder else None
            if cached is None:
                if folder:
                    cached = "listing:" + digest_bytes(reads.listing_digest_input(full))
                else:
                    try:
                        cached = digest_bytes(Path(full).read_bytes())
                    except OSError:
                        cached = "missing"
                    self._cache[full] = cached
            self._by_name[key] = cached
        return cached

    def label(self, path: str | Path) -> str:
        """The path relative to the project root (a folder keeps its trailing "/")."""
        key = str(path)
        label = self._labels.get(key)
        if label is None and key.endswith(CHANGED_MARK):
            label = self._labels[key] = self.label(key[:-1]) + " (changed while the test ran)"
        if label is None and key.endswith((LINK_MARK, STAT_MARK)):  # the path as user code named it, not resolved
            full = os.path.normpath(os.path.join(self.root, key[:-1]))
            label = full[len(self._under_root):] if full.startswith(self._under_root) else full
            label = self._labels[key] = label.replace(os.sep, "/") + key[-1]
        if label is None:
            full = self._resolved(key)
            if full.startswith(self._under_root):
                label = full[len(self._under_root):]
            elif full == self._root_text:
                label = "."
            else:
                label = full
            if os.sep != "/":
                label = label.replace(os.sep, "/")
            if key.endswith("/"):
                label += "/"
            self._labels[key] = label
        return label


def discovered_path(root: Path, relative: str) -> str:
    """A saved discovered dependency (relative to the root; a folder ends in "/") as an absolute path: `root /
    relative` as text, joined as text where that gives the same (a plain relative name; ~4 µs less a path, and a
    test may have a hundred)."""
    stripped = relative.rstrip("/")
    if os.sep == "/" and plain_relative(stripped):
        base = str(root)
        full = (base if base == "/" else base + "/") + stripped
    else:
        full = str(root / relative)
    return full + "/" if relative.endswith("/") else full


def plain_relative(name: str) -> bool:
    """No leading "/", no empty, "." or ".." segment: what pathlib joins without normalising."""
    return bool(name) and not name.startswith("/") and "//" not in name \
        and not any(part in (".", "..") for part in name.split("/"))



class KeyParts(SharedFieldsSet):
    model_config = ConfigDict(frozen=True)

    schema_version: str = Field(default_factory=engine_schema)
    definition: str
    target: str
    model: str | None = None
    mocks: str | None = None
    files: dict[str, str] = {}
    access_profile: str | None = None
    variant: str | None = None
    dialect: str | None = None
    invoker: str | None = None  # who ran an agent test (name, harness version, model, script digest)
    judge: str | None = None  # who judges its llm_judge evaluators (see testing.judges)
    hermetic: bool | None = None  # set where the test would run a real handler: a pass without --hermetic is not one with it
    factory: str | None = None  # what the registry factory read, for tests that run project code (a global it
    # filled may answer them); those are keyed afresh every run, so the key cache never holds it

    def key(self) -> str:
        """`digest(self)`, from its field values as they are: `model_dump(mode="python")` of these plain
        values (strings, None, a bool, a dict of strings) is a copy of them in field order, the same bytes."""
        return digest_dumped(_QUALNAME, dict(self.__dict__))

    def json_view(self) -> dict[str, Any]:
        """`model_dump(mode="json")` without the serializer: its values are already JSON (what is saved for
        `--explain`)."""
        return KeyParts.packed_view([*_field_values(self.__dict__)])

    @staticmethod
    def packed_view(packed: list[Any]) -> dict[str, Any]:
        """`json_view()` of the parts `packed` was taken from, without unpacking them."""
        view = dict(zip(_FIELDS, packed))
        view["files"] = dict(view["files"])
        return view

    def packed(self) -> list[Any]:
        """Its values in field order and its fields set: what a plan holds from keying a test to recording it
        (a list of 13 is ~160 bytes; the model's own dict of 12 fields is ~650: 2.7 MB at 5,000 tests). A list,
        not a tuple: CPython keeps up to 2,000 freed tuples of each length for reuse (0.27 MB of 13-tuples
        once a run's parts are let go); a freed list's items are freed."""
        return [*_field_values(self.__dict__), self.__pydantic_fields_set__]

    @classmethod
    def unpacked(cls, packed: list[Any]) -> "KeyParts":
        """The parts `packed` was taken from, equal field by field (and in the fields set), without validating
        again the values a validated instance gave."""
        return unvalidated(cls, dict(zip(_FIELDS, packed)), packed[-1])

    def changes_since(self, saved: dict) -> list[str]:
        """Human names of the parts that differ from a saved `model_dump()`."""
        changed = []
        mine = self.model_dump(mode="json")
        for name, value in mine.items():
            old = saved.get(name)
            if name == "files":
                old = old or {}
                for path in sorted(set(value) | set(old)):
                    if value.get(path) != old.get(path):
                        what = "folder" if path.endswith("/") else "" if path.startswith(("inputs ", "module ")) \
                            else "file"
                        how = " (no longer read)" if path not in value else ""
                        changed.append(f"{what} {path}{how}".lstrip())
            elif value != old:
                changed.append("schema" if name == "schema_version" else name)
        return changed


_FIELDS = tuple(KeyParts.model_fields)
_QUALNAME = f"{KeyParts.__module__}.{KeyParts.__qualname__}"  # what `digest_model` names a KeyParts by
FILES_AT = _FIELDS.index("files")  # where a packed KeyParts holds its files
_field_values = itemgetter(*_FIELDS)

def _once_per_object(memo: dict[int, tuple[Any, str]], value: Any, compute: Callable[[Any], str]) -> str:
    """`compute(value)` once per object: a frozen model's digest never changes. The memo holds the object, so its
    id is not reused by another while cached."""
    known = memo.get(id(value))
    if known is not None and known[0] is value:
        return known[1]
    found = compute(value)
    memo[id(value)] = (value, found)
    return found


_TOOL_DIGESTS: dict[int, tuple[Any, str]] = {}
_MODEL_DIGESTS: dict[int, tuple[Any, str]] = {}


def forget_digests() -> None:
    """Let the digest memos go once a run's tests are keyed: they held every tool's digest (~0.6 MB at 3,000 tools)
    to the end of the run, where a cold run's peak RSS is. A test keyed again later (its imports changed) computes
    its digests again, the same."""
    _TOOL_DIGESTS.clear()
    _MODEL_DIGESTS.clear()


def _tool_content(tool: ToolDefinition) -> str:
    # A tool's own tests are not part of what it is: adding a test must not re-run its siblings.
    return digest_model(tool, exclude={"tool_tests"})


def tool_digest(tool: ToolDefinition) -> str:
    return _once_per_object(_TOOL_DIGESTS, tool, _tool_content)


def model_digest(params: BaseModel) -> str:
    """An agent's model parameters' digest, once per object: the capability tests of one agent share it."""
    return _once_per_object(_MODEL_DIGESTS, params, digest)


def handler_files(tool: ToolDefinition) -> list[str]:
    files = [tool.handler_script] if tool.handler_script else []
    files += [s.source_file_path for s in tool.scripts() if s.source_file_path]
    return files


def callable_specs(response: MockResponse | None) -> list[str]:
    """Every `module:function` a mock can call, steps of a `sequence` included."""
    if response is None:
        return []
    if response.kind == "sequence":
        return [spec for item in response.sequence if isinstance(item, MockResponse) for spec in callable_specs(item)]
    if response.kind in ("callable", "stateful_callable") and response.callable_spec:
        return [response.callable_spec]
    return []


# The resources a real handler gets (`$OAC_RESOURCES_JSON`), an input like an `inputs=` glob (never a file_dep).
RESOURCES_PART = f"inputs ${RESOURCES_ENV}"


def tool_mock_parts(tool: ToolDefinition, profile_name: str | None, resolved: ResolvedConfig,
                    files: FileDigests) -> tuple[dict, dict[str, str], bool]:
    """The mock data one tool can reach under a profile, the files that data (or the handler) runs, and whether
    the real handler runs."""
    profile = resolved.mock_profiles.get(profile_name) if profile_name else None
    entries = reachable_mock_entries(tool.name, tool.mock, profile)
    response, _source = resolve_mock(tool.name, tool.mock, profile)
    file_parts: dict[str, str] = {}
    if response is not None:
        paths = [str(p) for p in mock_source_files(response, files.root, files.module_files)]
        for spec in callable_specs(response):  # a module not found today is keyed as missing, never as absent
            module = spec.partition(":")[0]
            if not files.module_files.get(module):
                file_parts[f"module {module}"] = "missing"
    else:
        paths = handler_files(tool)
        file_parts[RESOURCES_PART] = digest(os.environ.get(RESOURCES_ENV))  # the handler reads it (ScriptTool)
    file_parts.update({files.label(p): files(p) for p in paths})
    return entries, file_parts, response is None


def evaluator_files(evaluators: Sequence[object], files: FileDigests) -> dict[str, str]:
    """Source files of evaluator classes defined in the project (and the project modules they import)."""
    modules = {type(e).__module__ for e in evaluators if not type(e).__module__.startswith("open_agent_compiler.")}
    if not modules:
        return {}
    return {files.label(p): files(p) for p in project_imports.files_of(modules)}


def declared_inputs(patterns: Sequence[str], files: FileDigests) -> dict[str, str]:
    """Key parts of `inputs=` globs: per pattern the list of matching files, and each match's content."""
    parts: dict[str, str] = {}
    for pattern in dict.fromkeys(patterns):
        matches = sorted(path for path in files.root.glob(pattern) if path.is_file())
        labels = [files.label(path) for path in matches]
        parts[f"inputs {pattern}"] = digest(labels)
        parts.update((label, files(path)) for label, path in zip(labels, matches))
    return parts


def factory_digest(files: FileDigests) -> str | None:
    """One digest over what the registry factory read while it loaded and ran (None: it read nothing): a part
    of the key of every test that runs project code (a callable mock, a handler, an evaluator of the project, a
    judge: a `--judge module:make` judge may answer from a global the factory filled)."""
    paths = project_imports.files_of(project_imports.factory_reads())
    return digest(sorted((files.label(path), files(path)) for path in paths)) if paths else None


def key_parts(case: TestCase, *, resolved: ResolvedConfig, files: FileDigests, artifact_digests: dict[str, str],
              dialect: str, variant: str | None, hermetic: bool = False, discovered: Sequence[str] = (),
              invoker: str | None = None, judge: str | None = None, factory: str | None = None) -> KeyParts:
    """`discovered`: project files the test's last pass loaded (handler / mock imports), folded in like a depfile."""
    definition = digest(case.test)
    common = {"access_profile": case.test.access_profile, "variant": variant,
              "judge": judge if uses_judge(case.test) else None}
    found = {files.label(p): files(p) for p in discovered}
    turns = case.test.turns if isinstance(case.test, AgentTest) else ()  # (getattr of a missing field: ~10 µs)
    evaluated = evaluator_files([*case.test.evaluators, *(e for turn in turns for e in turn.evaluators)], files)
    found.update(evaluated)
    found.update(declared_inputs(case.test.inputs, files))
    if case.kind == "tool":
        assert case.tool is not None
        found.update(declared_inputs(case.tool.inputs, files))
        entries, file_parts, real = tool_mock_parts(case.tool, case.mock_profile, resolved, files)
        # project code in the engine (a callable mock, an evaluator, a judge) may answer from a global the factory
        # filled; a real handler forked from the zygote, started before the registry loaded, cannot
        in_engine = bool(evaluated) or bool(common["judge"]) or (bool(file_parts) if not real else not zygote.running())
        return KeyParts(definition=definition, target=tool_digest(case.tool), mocks=digest(entries),
                        files={**found, **file_parts}, hermetic=hermetic if real else None,
                        factory=factory if in_engine else None, **common)
    agent = resolved.agent(case.slot or "")
    model = model_digest(agent.model_parameters) if agent.model_parameters else None
    target = artifact_digests.get(agent.compiled_name, "missing")
    if case.kind == "capability":
        return KeyParts(definition=definition, target=target, model=model, dialect=dialect, files=found,
                        factory=factory if found or common["judge"] else None, **common)
    mocks: dict[str, dict] = {}
    file_parts: dict[str, str] = dict(found)
    any_real = False
    for reachable in agent.tools:
        file_parts.update(declared_inputs(reachable.tool.inputs, files))
        entries, tool_files, real = tool_mock_parts(reachable.tool, case.mock_profile, resolved, files)
        mocks[reachable.tool.name] = {"mock": entries, "tool": tool_digest(reachable.tool)}
        file_parts.update(tool_files)
        any_real = any_real or real
    if invoker is not None:  # the cassette it replays is an input
        from open_agent_compiler.testing.invokers.cassette import cassette_key_part  # only when agent tests run
        file_parts.update(cassette_key_part(files.root, case.test, case.slot or "", files))
    return KeyParts(definition=definition, target=target, model=model, mocks=digest(mocks), files=file_parts,
                    dialect=dialect, hermetic=hermetic if any_real else None, invoker=invoker,
                    factory=factory if file_parts or common["judge"] else None, **common)
