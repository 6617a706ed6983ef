"""Where a tool script's answer comes from when it is not its own `execute()`: the mock a test hands the script
(`--mock-callable module:callable`, then `--mock SPEC`, then `$OAC_MOCK_RESPONSE`; a SPEC is JSON text or the path
of a JSON file) and the resources its access profile binds (`$OAC_RESOURCES_JSON`). The order is 1.16.5's."""

import inspect
import json
import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from open_agent_compiler.errors import OacError
from open_agent_compiler.model.resource_handle import MOCK_ENV, RESOURCES_ENV, ResourceHandle
from open_agent_compiler.model.tool_cli import ToolArgsError
from open_agent_compiler.usercode import loader

MOCK_OPTIONS = ("--mock", "--mock-callable")


def split_mock_options(words: list[str]) -> tuple[list[str], dict[str, str]]:
    """`words` without `--mock X` / `--mock-callable X` (or `--opt=X`), and those options' values."""
    rest: list[str] = []
    options: dict[str, str] = {}
    index = 0
    while index < len(words):
        flag, has_value, inline = words[index].partition("=")
        if flag not in MOCK_OPTIONS:
            rest.append(words[index])
            index += 1
            continue
        if has_value:
            options[flag], index = inline, index + 1
        elif index + 1 < len(words):
            options[flag], index = words[index + 1], index + 2
        else:
            raise ToolArgsError(f"{flag} needs a value")
    return rest, options


def _spec_payload(spec: str, origin: str) -> Any:
    """A mock SPEC: JSON text, else the path of a JSON file."""
    try:
        return json.loads(spec)
    except ValueError:
        pass
    try:
        return json.loads(Path(spec).read_text())
    except OSError as exc:
        raise ToolArgsError(f"{origin} is neither JSON nor a readable JSON file: {spec!r} ({exc.strerror})") from None
    except ValueError as exc:
        raise ToolArgsError(f"{origin} file {spec!r} is not JSON: {exc}") from None


def _mock_callable(spec: str, validated_input: Any) -> Any:
    """What the `module:callable` the test names returns for the input (imported through the one loader)."""
    try:
        loaded = loader.load(spec, None, "--mock-callable", expects="a mock function")
        return loader.call(loaded, spec, "--mock-callable", validated_input)
    except OacError as exc:
        raise ToolArgsError(str(exc)) from None


def given_mock(options: Mapping[str, str], validated_input: Any,
               environ: Mapping[str, str] | None = None) -> tuple[bool, Any]:
    """(True, the mock's answer) when the command line or the environment gives one, else (False, None)."""
    env = os.environ if environ is None else environ
    if "--mock-callable" in options:
        return True, _mock_callable(options["--mock-callable"], validated_input)
    if "--mock" in options:
        return True, _spec_payload(options["--mock"], "--mock")
    if env.get(MOCK_ENV):
        return True, _spec_payload(env[MOCK_ENV], f"${MOCK_ENV}")
    return False, None


def resources_from_env(environ: Mapping[str, str] | None = None) -> dict[str, ResourceHandle]:
    """`$OAC_RESOURCES_JSON` ({name: {"kind", "config", "mock_only"}}) as handles; unset or empty: none."""
    raw = (os.environ if environ is None else environ).get(RESOURCES_ENV, "")
    if not raw.strip():
        return {}
    try:
        payload = json.loads(raw)
    except ValueError as exc:
        raise ToolArgsError(f"${RESOURCES_ENV} is not JSON: {exc}") from None
    if not isinstance(payload, dict) or not all(isinstance(v, dict) for v in payload.values()):
        raise ToolArgsError(f"${RESOURCES_ENV} must be an object of {{name: {{kind, config, mock_only}}}}")
    handles = {}
    for name, binding in payload.items():
        config = binding.get("config") or {}
        if not isinstance(config, dict):
            raise ToolArgsError(f"${RESOURCES_ENV}: resource {name!r} has a config that is not an object")
        handles[name] = ResourceHandle(str(name), str(binding.get("kind", "")), config,
                                       mock_only=bool(binding.get("mock_only", False)))
    return handles


def takes_resources(execute: Callable[..., Any]) -> bool:
    """Whether `execute` accepts a `resources` argument (named, or through **kwargs)."""
    parameters = inspect.signature(execute).parameters.values()
    return any(p.name == "resources" or p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters)
