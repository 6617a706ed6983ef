"""`CompileScript`: compile a config from Python (a project's build script), for one or more dialects and
variant passes, and write it under `target` through `compiler.writer` (the same safe writes as `oac compile`).

    CompileScript(target=Path("build"), factory=registry, config="prod", variants=VARIANTS, clean=True).run()

Keyword arguments as in the public package. `factory` is a callable returning an `AgentRegistry` (or the
registry itself); `factory_spec` a `module:callable` string — exactly one of the two. Cleaning only ever
takes back files an earlier compile wrote and that are still as written (never a wipe of `target`): `full` and
`per_variant` both do that before writing, `none` leaves old files to the normal write, which already
removes what it wrote before and no longer produces.
"""

import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from open_agent_compiler.compiler.dialects import DEFAULT_DIALECT, get_dialect
from open_agent_compiler.compiler.expand import with_variants
from open_agent_compiler.compiler.writer import WriteReport, write_output
from open_agent_compiler.errors import OacError, UsageError
from open_agent_compiler.model.core.access_profile import AccessProfileRegistry
from open_agent_compiler.model.core.compilation_context import CompilationContext, active
from open_agent_compiler.model.core.variant_spec import VariantSpec
from open_agent_compiler.model.factory import load_registry
from open_agent_compiler.model.registry import AgentRegistry, ResolvedConfig

CleanStrategy = Literal["none", "full", "per_variant"]
Factory = AgentRegistry | Callable[[], AgentRegistry]


class CompileResult(BaseModel):
    """What one run wrote: `written_files` are paths under `target` of files
    created or changed."""

    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)

    target: Path
    config: str
    dialects: tuple[str, ...]
    resolved_slots: list[str] = []
    written_files: list[Path] = []  # none on a dry run: see `planned_files`
    planned_files: list[Path] = []  # what a dry run would write (on a real run, the same as written_files)
    unchanged_files: list[Path] = []
    removed_files: list[Path] = []
    dry_run: bool = False
    variants: list[str] = []
    warnings: tuple[str, ...] = ()
    reports: tuple[WriteReport, ...] = ()


def check_access_profile(resolved: ResolvedConfig, profiles: AccessProfileRegistry, name: str) -> None:
    """Every resource a reachable tool requires is bound by profile `name`, and a `mock_only` binding is used
    only by tools a mock answers (the tool's own mock or a mock profile's): their tests never reach it.
    Bindings are runtime configuration for the tools; no harness file carries them."""
    requirements = {r.tool.name: list(r.tool.requires_resources) for r in resolved.tools() if r.tool.requires_resources}
    mocked = {r.tool.name for r in resolved.tools() if r.tool.mock is not None}
    mocked |= {tool for profile in resolved.mock_profiles.values() for tool in profile.responses}
    try:
        profiles.validate_against(name, requirements, mocked)
    except ValueError as exc:
        raise OacError(str(exc)) from None


class CompileScript:
    def __init__(
        self, *, target: str | os.PathLike[str], config: str, dialect: str | Sequence[str] = DEFAULT_DIALECT,
        factory: Factory | None = None, factory_spec: str | None = None, clean: bool = False,
        clean_strategy: CleanStrategy | None = None, dry_run: bool = False, verbose: bool = False,
        variants: Sequence[VariantSpec] | None = None, access_profile: str | None = None,
        mock_profile: str | None = None, client_id: str | None = None, native_tools: bool = False,
        store_url: str | None = None, access_profiles: AccessProfileRegistry | None = None,
        source_root: str | os.PathLike[str] | None = None,
    ) -> None:
        if (factory is None) == (factory_spec is None):
            raise UsageError("CompileScript needs exactly one of factory (a callable) or factory_spec "
                             "('module:callable')")
        # Not built here: say so instead of compiling something other than what was asked.
        if native_tools:
            raise OacError("CompileScript(native_tools=True): native tool shims are not supported; JSON tools are "
                           "documented as commands in every dialect")
        if store_url is not None:
            raise OacError("CompileScript(store_url=…): there is no run store to record compiles in")
        self.target = Path(target)
        self.config = config
        self.dialects = (dialect,) if isinstance(dialect, str) else tuple(dialect)
        for name in self.dialects:
            try:
                get_dialect(name)  # an unknown name fails now, in one line naming the known dialects
            except OacError as exc:
                raise UsageError(str(exc)) from None
        self.factory = factory
        self.factory_spec = factory_spec
        self._clean_flag = clean
        self.clean_strategy = clean_strategy
        self.clean = self.effective_clean_strategy() != "none"
        self.dry_run = dry_run
        self.verbose = verbose
        self.variants = tuple(variants or ())
        seen: dict[str, str] = {}
        for spec in self.variants:  # as 1.16.5 does, at construction: the two would write the same agent files
            if spec.postfix in seen:
                raise UsageError(f"variants {seen[spec.postfix]!r} and {spec.name!r} share the postfix {spec.postfix!r}: "
                                 "each variant needs its own postfix, or they write over each other's agents")
            seen[spec.postfix] = spec.name
        self.access_profile = access_profile
        self.access_profiles = access_profiles
        self.mock_profile = mock_profile
        self.client_id = client_id
        self.source_root = Path(source_root) if source_root is not None else None

    def effective_clean_strategy(self) -> CleanStrategy:
        """`clean_strategy` when given, else `full` with `clean=True` and `none` without."""
        return self.clean_strategy or ("full" if self._clean_flag else "none")

    def resolve_factory(self) -> Callable[[], AgentRegistry]:
        """The factory as a callable returning the registry (a `factory_spec` is loaded from the source root)."""
        if self.factory_spec is not None:
            spec, root = self.factory_spec, str(self.source_root or Path.cwd())
            return lambda: load_registry(spec, root)
        factory = self.factory
        if isinstance(factory, AgentRegistry):
            return lambda: factory
        assert factory is not None
        return factory

    def _registry(self, root: Path) -> AgentRegistry:
        if self.factory_spec is not None:
            return load_registry(self.factory_spec, str(root))
        if isinstance(self.factory, AgentRegistry):
            return self.factory
        registry = self.factory() if callable(self.factory) else None
        if not isinstance(registry, AgentRegistry):
            raise OacError(f"factory {self.factory!r} did not return an AgentRegistry")
        return registry

    def _notes(self, resolved: ResolvedConfig) -> list[str]:
        """Checks of the names the public package only passes on to factories, and what we cannot honour."""
        notes = []
        if self.mock_profile is not None and self.mock_profile not in resolved.mock_profiles:
            notes.append(f"mock profile {self.mock_profile!r} is not registered; only factories see the name "
                         "(CompilationContext), the compiled files do not depend on it")
        if self.access_profile is not None:
            if self.access_profiles is not None:
                check_access_profile(resolved, self.access_profiles, self.access_profile)
            else:
                notes.append(f"access profile {self.access_profile!r} not checked: no AccessProfileRegistry given")
        if self.client_id is not None:
            notes.append(f"client_id {self.client_id!r}: compiles are not personalized per client here")
        if self.clean:  # the public package deletes the whole target here
            notes.append("clean: only files oac wrote (its manifest) are taken back; the rest of the target stays")
        for spec in self.variants:  # only model, temperature and effort reach an agent file
            unused = [name for name, value in spec.preset.sampling if name != "temperature" and value is not None]
            unused += [f"limits.{name}" for name, value in spec.preset.limits if value is not None]
            if unused:
                notes.append(f"variant {spec.name!r}: preset {spec.preset.name!r} sets {', '.join(unused)}, which "
                             "no agent file here carries; not written")
        return notes

    def context(self) -> CompilationContext:
        """What factories see during this pass: the profiles and client it is for, and a single variant's
        identity and feature flags (several variants compile in one pass: then none of them is current)."""
        spec = self.variants[0] if len(self.variants) == 1 else None
        return CompilationContext(
            variant_name=spec.name if spec else None, variant_postfix=spec.postfix if spec else "",
            access_profile_name=self.access_profile, mock_profile_name=self.mock_profile, client_id=self.client_id,
            feature_flags=dict(spec.feature_flags) if spec else {})

    def run(self) -> CompileResult:
        root = self.source_root or Path.cwd()
        with active(self.context()):
            resolved = self._registry(root).resolve_config(self.config)
            notes = self._notes(resolved)
            expanded = with_variants(resolved, self.variants)
            outputs = [get_dialect(name).compile(expanded, source_root=root) for name in self.dialects]
        for output in outputs:  # check every write before the first one happens
            write_output(output, self.target, dialect=output.dialect, dry_run=True)
        cleaned: list[WriteReport] = []
        reports: list[WriteReport] = []
        for output in outputs:
            if self.clean:
                cleaned.append(write_output(output, self.target, dialect=output.dialect, clean=True,
                                            dry_run=self.dry_run))
            reports.append(write_output(output, self.target, dialect=output.dialect, dry_run=self.dry_run))
        written = {rel for report in reports for rel in report.written}  # cleaned, then written again: replaced
        result = CompileResult(
            target=self.target,
            config=self.config,
            dialects=self.dialects,
            resolved_slots=[agent.slot for agent in resolved.agents],
            written_files=[] if self.dry_run else [self.target / rel for report in reports for rel in report.written],
            planned_files=[self.target / rel for report in reports for rel in report.written],
            unchanged_files=[self.target / rel for report in reports for rel in report.unchanged],
            removed_files=[self.target / rel for report in [*cleaned, *reports] for rel in report.removed
                           if rel not in written],
            dry_run=self.dry_run,
            variants=[spec.name for spec in self.variants],
            warnings=(*notes, *(warning for output in outputs for warning in output.warnings)),
            reports=(*cleaned, *reports),
        )
        if self.verbose:
            self._print(result)
        else:  # a warning says where the output differs from what was asked: never silent (1.16.5 is)
            for warning in result.warnings:
                print(f"warning: {warning}", file=sys.stderr)
        return result

    def _print(self, result: CompileResult) -> None:
        wrote, removed = ("would write", "would remove") if result.dry_run else ("wrote", "removed")
        for path in result.planned_files:
            print(f"{wrote} {path}")
        for path in result.removed_files:
            print(f"{removed} {path}")
        for warning in result.warnings:
            print(f"warning: {warning}")
        print(f"compiled {self.config!r} for {', '.join(self.dialects)} -> {self.target}: "
              f"written={len(result.written_files)} removed={len(result.removed_files)}"
              + (f" (dry run: would write {len(result.planned_files)})" if result.dry_run else ""))


def _no_options(options: dict[str, Any] | None) -> None:
    if options:
        raise OacError(f"build(options={sorted(options)!r}): dialect options are not supported here; the dialect "
                       "modules take no options")


def build(target: str | os.PathLike[str], registry: AgentRegistry, config_name: str, *,
          dialect: str = DEFAULT_DIALECT, options: dict[str, Any] | None = None) -> CompileResult:
    """One compile of `config_name` for `dialect` into `target` (the public package's one-call form)."""
    _no_options(options)
    return CompileScript(target=target, config=config_name, dialect=dialect, factory=registry).run()


def build_variant(target: str | os.PathLike[str], registry: AgentRegistry, config_name: str, spec: VariantSpec, *,
                  access_profile_name: str | None = None, mock_profile_name: str | None = None,
                  client_id: str | None = None, dialect: str = DEFAULT_DIALECT,
                  options: dict[str, Any] | None = None) -> CompileResult:
    """One pass under `spec` (its preset and postfix on every agent), with its feature flags and the given
    profile names as the current CompilationContext while the config is resolved and compiled."""
    _no_options(options)
    return CompileScript(target=target, config=config_name, dialect=dialect, factory=registry, variants=[spec],
                         access_profile=access_profile_name, mock_profile=mock_profile_name,
                         client_id=client_id).run()
