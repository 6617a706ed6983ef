"""A test's key: a digest over everything that can change its result, kept as named parts so that
`--explain` can say which one changed."""

from pathlib import Path

from pydantic import BaseModel, ConfigDict

from open_agent_compiler.model.core.tool import ToolDefinition
from open_agent_compiler.model.hashing import digest, digest_bytes, digest_model
from open_agent_compiler.model.registry import ResolvedConfig
from open_agent_compiler.testing.discovery import TestCase
from open_agent_compiler.testing.judges import uses_judge
from open_agent_compiler.testing.mocks import mock_source_files, reachable_mock_entries, resolve_mock

# Bump when the meaning of a result changes (result schema, evaluator semantics): every green test re-runs.
ENGINE_SCHEMA = "oac-results/2"  # 2: tool tests hold outputs to the JSON tool's schemas


class FileDigests:
    """Content digests of files, each file read once per run; also remembers, per run, where each callable
    mock's module was found and how each path is labelled."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._resolved_root = root.resolve()
        self._cache: dict[Path, str] = {}
        self._by_name: dict[str, str] = {}
        self._labels: dict[str, str] = {}
        self.module_files: dict[str, list[Path]] = {}  # module name → files importing it runs

    def __call__(self, path: str | Path) -> str:
        key = str(path)
        cached = self._by_name.get(key)
        if cached is None:
            full = (self.root / path).resolve()
            cached = self._cache.get(full)
            if cached is None:
                try:
                    cached = digest_bytes(full.read_bytes())
                except OSError:
                    cached = "missing"
                self._cache[full] = cached
            self._by_name[key] = cached
        return cached

    def label(self, path: str | Path) -> str:
        key = str(path)
        label = self._labels.get(key)
        if label is None:
            full = (self.root / path).resolve()
            try:
                label = full.relative_to(self._resolved_root).as_posix()
            except ValueError:
                label = full.as_posix()
            self._labels[key] = label
        return label


class KeyParts(BaseModel):
    model_config = ConfigDict(frozen=True)

    schema_version: str = ENGINE_SCHEMA
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

    def key(self) -> str:
        return digest(self)

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
                        changed.append(f"file {path}")
            elif value != old:
                changed.append("schema" if name == "schema_version" else name)
        return changed


def tool_digest(tool: ToolDefinition) -> str:
    # A tool's own tests are not part of what it is: adding a test must not re-run its siblings.
    return digest_model(tool, exclude={"tool_tests"})


def handler_files(tool: ToolDefinition) -> list[str]:
    files = [tool.handler_script] if tool.handler_script else []
    files += [s.source_file_path for s in tool.scripts() if s.source_file_path]
    return files


def tool_mock_parts(tool: ToolDefinition, profile_name: str | None, resolved: ResolvedConfig,
                    files: FileDigests) -> tuple[dict, dict[str, str]]:
    """The mock data one tool can reach under a profile, and the files that data (or the handler) runs."""
    profile = resolved.mock_profiles.get(profile_name) if profile_name else None
    entries = reachable_mock_entries(tool.name, tool.mock, profile)
    response, _source = resolve_mock(tool.name, tool.mock, profile)
    if response is not None:
        paths = [str(p) for p in mock_source_files(response, files.root, files.module_files)]
    else:
        paths = handler_files(tool)
    return entries, {files.label(p): files(p) for p in paths}


def key_parts(case: TestCase, *, resolved: ResolvedConfig, files: FileDigests, artifact_digests: dict[str, str],
              dialect: str, variant: str | None, invoker: str | None = None, judge: str | None = None) -> KeyParts:
    definition = digest(case.test)
    common = {"access_profile": case.test.access_profile, "variant": variant,
              "judge": judge if uses_judge(case.test) else None}
    if case.kind == "tool":
        assert case.tool is not None
        entries, file_parts = tool_mock_parts(case.tool, case.mock_profile, resolved, files)
        return KeyParts(definition=definition, target=tool_digest(case.tool), mocks=digest(entries),
                        files=file_parts, **common)
    agent = resolved.agent(case.slot or "")
    model = digest(agent.model_parameters) if agent.model_parameters else None
    target = artifact_digests.get(agent.compiled_name, "missing")
    if case.kind == "capability":
        return KeyParts(definition=definition, target=target, model=model, dialect=dialect, **common)
    mocks: dict[str, dict] = {}
    file_parts: dict[str, str] = {}
    for reachable in agent.tools:
        entries, tool_files = tool_mock_parts(reachable.tool, case.mock_profile, resolved, files)
        mocks[reachable.tool.name] = {"mock": entries, "tool": tool_digest(reachable.tool)}
        file_parts.update(tool_files)
    return KeyParts(definition=definition, target=target, model=model, mocks=digest(mocks), files=file_parts,
                    dialect=dialect, invoker=invoker, **common)
