"""Which invoker a run uses: `--invoker NAME|module:factory` or `[tool.oac] invoker`. Bad input is one line."""

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from open_agent_compiler.errors import OacError
from open_agent_compiler.testing.invokers.loading import call_factory, digest_of, load_attribute, module_exists
from open_agent_compiler.testing.invokers.protocol import Invoker
from open_agent_compiler.testing.invokers.scripted import ScriptedInvoker

SCRIPTS_ATTRIBUTE = "SCRIPTS"


def default_script_spec(factory: str) -> str:
    """By convention the scripts of `agents:registry` are `agents_scripts:SCRIPTS`."""
    return f"{factory.partition(':')[0]}_scripts:{SCRIPTS_ATTRIBUTE}"


def load_scripts(script: str | None, factory: str, root: Path, invoker: str) -> tuple[Mapping[str, Any], str, str]:
    """(test name → script, the spec they came from, digest of the script module)."""
    spec = script or default_script_spec(factory)
    if script is None and not module_exists(spec.partition(":")[0], root):
        raise OacError(f"--invoker {invoker}: no model script: add {spec.partition(':')[0]}.py defining "
                       f"{SCRIPTS_ATTRIBUTE}, or set [tool.oac] invoker_script = 'module:attribute'")
    scripts, script_digest = load_attribute(spec, root, "model script")
    if not isinstance(scripts, Mapping):
        raise OacError(f"model script {spec!r} is a {type(scripts).__name__}, not a mapping of test name → script")
    return scripts, spec, script_digest


def _scripted(script: str | None, factory: str, root: Path, dialect: str) -> Invoker:
    scripts, spec, script_digest = load_scripts(script, factory, root, "scripted")
    return ScriptedInvoker(scripts, spec, script_digest)


def _harness(name: str) -> Callable[[str | None, str, Path, str], Invoker]:
    def make(script: str | None, factory: str, root: Path, dialect: str) -> Invoker:
        from open_agent_compiler.testing.invokers.harness import endpoint_from_env, harness_invoker  # only when used

        endpoint = endpoint_from_env()
        if endpoint is not None:  # a real model: no script needed
            return harness_invoker(name, {}, "", None, dialect, endpoint)
        default = default_script_spec(factory)
        if script is None and not module_exists(default.partition(":")[0], root):  # cassettes only (see cassette)
            return harness_invoker(name, {}, default, None, dialect)
        scripts, spec, script_digest = load_scripts(script, factory, root, name)
        return harness_invoker(name, scripts, spec, script_digest, dialect)
    return make


BUILTIN: dict[str, Callable[[str | None, str, Path, str], Invoker]] = {
    "scripted": _scripted,
    "opencode": _harness("opencode"),
    "claude": _harness("claude"),
    "codex": _harness("codex"),
    "pi": _harness("pi"),
}


def load_invoker(spec: str | None, *, root: Path, factory: str, script: str | None = None,
                 dialect: str = "opencode", record: str | None = None,
                 record_settings: dict[str, Any] | None = None) -> Invoker | None:
    """The invoker `spec` names, ready to run (binary found, script loaded), or None when none is wired.
    `record`: --record MODE, cassettes recorded through the loopback server (harness invokers only)."""
    if not spec:
        if record is not None:
            raise OacError("--record needs a harness invoker: pass --invoker opencode, claude, codex or pi")
        return None
    if spec in BUILTIN:
        made = BUILTIN[spec](script, factory, root, dialect)
        if record is not None:
            made = _recording(spec, made, record, record_settings)
        return made
    if record is not None:
        raise OacError(f"--record needs a harness invoker (opencode, claude, codex or pi), not {spec!r}")
    if ":" not in spec:
        raise OacError(f"unknown invoker {spec!r}: use one of {', '.join(sorted(BUILTIN))} or module:factory")
    invoker: Invoker = call_factory(spec, root, "invoker factory", lambda made: isinstance(made, Invoker),
                                    "no info/session")
    return invoker


def _recording(spec: str, invoker: Invoker, record: str, settings: dict[str, Any] | None) -> Invoker:
    from open_agent_compiler.testing.invokers.cassette import MODES, upstream_from
    from open_agent_compiler.testing.invokers.harness import HarnessInvoker

    if record not in MODES:
        raise OacError(f"--record {record!r}: use one of {', '.join(MODES)}")
    if not isinstance(invoker, HarnessInvoker):
        raise OacError(f"--record needs a harness invoker (opencode, claude, codex or pi), not {spec!r}")
    invoker.use_cassettes(record, upstream_from(settings))
    return invoker


def invoker_key(spec: str | None, invoker: Invoker | None, root: Path) -> str | None:
    """Who runs agent tests, for keys: what the invoker declares and, for `module:factory`, the digest of every
    project file loading its factory ran or read."""
    if invoker is None:
        return None
    declared = invoker.info.key()
    if spec and spec not in BUILTIN:
        return f"{declared} factory={spec} module={digest_of(spec, root, 'invoker factory')}"
    return declared
