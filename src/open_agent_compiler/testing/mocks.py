"""Mock behaviour for the data in `model.core.mock`: which mock a tool test reaches, what a mocked call returns,
and which files and data a mock depends on (for cache keys).

Resolution order for a tool: the selected profile's entry for it, then the tool's own default mock, then None
(run the real handler). A `MockSession` covers ONE test (an agent test is one session across all its turns):
per-tool call counters and `stateful_callable` scratchpads live in it and die with it.
"""

import copy
import functools
import importlib.machinery
import inspect
import sys
import typing
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from open_agent_compiler.errors import OacError
from open_agent_compiler.model.core.mock import MockInput, MockProfile, MockResponse, MockState
from open_agent_compiler.usercode import loader

HANDLER_SOURCE = "handler"
TOOL_MOCK_SOURCE = "tool.mock"


def resolve_mock(
    tool_name: str, default: MockResponse | None, profile: MockProfile | None
) -> tuple[MockResponse | None, str]:
    """(mock, source label): ("profile:<name>") entry, else ("tool.mock") default, else (None, "handler")."""
    if profile is not None and tool_name in profile.responses:
        return profile.responses[tool_name], f"profile:{profile.name}"
    if default is not None:
        return default, TOOL_MOCK_SOURCE
    return None, HANDLER_SOURCE


def reachable_mock_entries(
    tool_name: str, default: MockResponse | None, profile: MockProfile | None
) -> dict[str, Any]:
    """Exactly the mock data a test of `tool_name` can reach, as JSON-ready data for a cache key.

    Only the entry that wins resolution is included, so editing another tool's profile entry — or a default the
    profile shadows — leaves the key unchanged. A callable mock's code is not included: hash the files from
    `mock_source_files` for that.
    """
    response, source = resolve_mock(tool_name, default, profile)
    entry: Any = None
    if response is not None:
        try:
            entry = response.model_dump(mode="json")
        except Exception:  # outputs pydantic cannot render as JSON: fall back to a textual form
            entry = {"unserializable": repr(response.model_dump())}
    return {"tool": tool_name, "source": source, "response": entry}


def _split_spec(spec: str) -> tuple[str, str]:
    module, _, attribute = spec.partition(":")
    if not module or not attribute:
        raise OacError(f"mock callable {spec!r} is not of the form 'module:function'")
    return module, attribute


def load_mock_callable(spec: str, project_root: Path | None = None) -> Callable[..., Any]:
    """Import `module:function` (attribute may be dotted, e.g. `module:Class.method`) with `project_root` first
    on sys.path, through the one loader for user code. Any problem becomes a one-line `OacError` naming the spec."""
    _split_spec(spec)
    target = loader.load(spec, project_root, "mock callable").target
    if not callable(target):
        raise OacError(f"mock callable {spec!r}: {spec.partition(':')[2]!r} is a {type(target).__name__}, "
                       "not callable")
    return target


_ATOMIC = frozenset((str, int, float, bool, type(None)))


class _NotPlain(Exception):
    pass


def _plain_copy(value: Any, memo: dict[int, Any]) -> Any:
    kind = type(value)
    if kind in _ATOMIC:
        return value
    if kind is dict:
        found = memo.get(id(value))
        if found is None:
            found = memo[id(value)] = {}
            for key, item in value.items():
                if type(key) not in _ATOMIC:
                    raise _NotPlain
                found[key] = _plain_copy(item, memo)
        return found
    if kind is list:
        found = memo.get(id(value))
        if found is None:
            found = memo[id(value)] = []
            for item in value:
                found.append(_plain_copy(item, memo))
        return found
    raise _NotPlain


def fresh_copy(value: Any) -> Any:
    """`copy.deepcopy(value)`: for data made of exactly dicts, lists, str, int, float, bool and None (a mock's
    usual output) the same copy made without deepcopy's per-object dispatch, shared and circular parts kept as
    deepcopy keeps them; anything else goes to deepcopy."""
    try:
        return _plain_copy(value, {})
    except (_NotPlain, RecursionError):
        return copy.deepcopy(value)


class MockSession:
    """Mock state for one test: per-tool call counters and `MockState`s, and the callables it imported."""

    def __init__(self, project_root: Path | None = None) -> None:
        self.project_root = project_root
        self._states: dict[str, MockState] = {}
        self._counts: dict[str, int] = {}
        self._callables: dict[str, Callable[..., Any]] = {}

    def state(self, tool_name: str) -> MockState:
        """The persistent state `stateful_callable` mocks of `tool_name` receive in this session."""
        if tool_name not in self._states:
            self._states[tool_name] = MockState(tool_name=tool_name)
        return self._states[tool_name]

    def calls(self, tool_name: str) -> int:
        """How many mocked calls `tool_name` has had in this session."""
        return self._counts.get(tool_name, 0)

    def _callable(self, spec: str) -> Callable[..., Any]:
        if spec not in self._callables:
            self._callables[spec] = load_mock_callable(spec, self.project_root)
        return self._callables[spec]

    def call(self, tool_name: str, response: MockResponse, payload: Any) -> Any:
        """What the mocked `tool_name` returns for `payload` on this (0-based, per-tool) call.

        The call is counted even if a callable raises; its exception propagates unchanged. Fixed, sequence
        and echo results are deep copies, so callers cannot mutate the mock data or the input they passed.
        """
        index = self._counts.get(tool_name, 0)
        self._counts[tool_name] = index + 1
        return self._respond(tool_name, response, payload, index)

    def _respond(self, tool_name: str, response: MockResponse, payload: Any, index: int) -> Any:
        if response.kind == "fixed":
            return fresh_copy(response.fixed_output)
        if response.kind == "sequence":
            item = response.sequence[min(index, len(response.sequence) - 1)]
            if isinstance(item, MockResponse):  # a step may itself be a mock, answered for this same call
                return self._respond(tool_name, item, payload, index)
            return fresh_copy(item)
        if response.kind == "echo":
            return fresh_copy(payload)
        spec = response.callable_spec or ""
        function = self._callable(spec)
        arguments = as_mock_input(payload, function)
        if response.kind == "callable":
            return function(arguments)
        state = self.state(tool_name)
        state.call_index = index
        return function(arguments, state)


@functools.lru_cache(maxsize=256)
def input_model(function: Callable[..., Any]) -> type[BaseModel] | None:
    """The pydantic model a mock function's first parameter is annotated with (e.g. the tool's `Input`), or None."""
    if not (inspect.isfunction(function) or inspect.ismethod(function)):
        return None
    try:
        parameters = list(inspect.signature(function).parameters.values())
        hints = typing.get_type_hints(function)
    except Exception:  # noqa: BLE001 - unresolvable annotations: no model, the plain MockInput is used
        return None
    hint = hints.get(parameters[0].name) if parameters else None
    return hint if isinstance(hint, type) and issubclass(hint, BaseModel) else None


def as_mock_input(payload: Any, function: Callable[..., Any] | None = None) -> Any:
    """The input a callable mock receives: validated into the pydantic model its first parameter is annotated
    with (the tool's input model; a payload it rejects makes the mock raise), else a `MockInput` (attribute and
    key access). Always a copy: the mock cannot change the caller's input. A non-mapping payload is unchanged."""
    if not (isinstance(payload, dict) and all(isinstance(key, str) for key in payload)):
        return payload
    model = input_model(function) if function is not None else None
    return (model or MockInput).model_validate(copy.deepcopy(payload))


def _find_without_import(module_name: str, project_root: Path | None) -> list[Path] | None:
    """Files executed by importing `module_name` (package `__init__`s, then the module), found with
    `PathFinder` one level at a time so no package is imported. None if a level cannot be found this way."""
    search: list[str] = ([str(project_root)] if project_root is not None else []) + sys.path
    parts = module_name.split(".")
    files: list[Path] = []
    for depth in range(1, len(parts) + 1):
        name = ".".join(parts[:depth])
        spec = importlib.machinery.PathFinder.find_spec(name, search)
        if spec is None:
            return None
        if spec.origin and spec.has_location:
            files.append(Path(spec.origin).resolve())
        if depth < len(parts):
            locations = spec.submodule_search_locations
            if locations is None:
                return None
            search = list(locations)
    return files


def mock_source_files(response: MockResponse | None, project_root: Path | None = None,
                      found_before: dict[str, list[Path]] | None = None) -> list[Path]:
    """The source file(s) of the module a callable / stateful_callable mock names, for hashing.

    Found without executing the module where possible (a path search level by level). Includes the `__init__.py`
    of each enclosing package, since importing runs them too. Modules the callable itself imports are not
    followed. Other mock kinds, or a module that cannot be located, give [].
    """
    if response is not None and response.kind == "sequence":
        nested = [mock_source_files(item, project_root, found_before) for item in response.sequence
                  if isinstance(item, MockResponse)]
        return list(dict.fromkeys(path for paths in nested for path in paths))
    if response is None or response.kind not in ("callable", "stateful_callable") or not response.callable_spec:
        return []
    module_name, _ = _split_spec(response.callable_spec)
    if found_before is None:
        return _module_files(module_name, project_root)
    if module_name not in found_before:
        found_before[module_name] = _module_files(module_name, project_root)
    return list(found_before[module_name])


def _module_files(module_name: str, project_root: Path | None) -> list[Path]:
    found = _find_without_import(module_name, project_root)
    if found is not None:
        return list(dict.fromkeys(found))
    loaded = sys.modules.get(module_name)
    if loaded is not None and getattr(loaded, "__file__", None):
        return [Path(loaded.__file__).resolve()]
    origin = loader.module_origin(module_name, project_root)  # may import parent packages: through the loader
    return [Path(origin).resolve()] if origin else []
