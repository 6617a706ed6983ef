"""`CompileScript`: compile a config from Python (a project's build script), for one or more dialects and
variant passes, and write it under `target` through `compiler.writer` (the same safe writes as `oac compile`).

    CompileScript(target=Path("build"), factory=registry, config="prod", variants=VARIANTS, clean=True).run()

`factory` is an `AgentRegistry`, a callable returning one, or a `module:callable` spec. `clean=True` first takes
back what earlier compiles wrote for these dialects (only files still as written), then writes anew.
"""

import os
from collections.abc import Callable, Sequence
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from open_agent_compiler.compiler.dialects import DEFAULT_DIALECT, DIALECTS, get_dialect
from open_agent_compiler.compiler.expand import with_variants
from open_agent_compiler.compiler.writer import WriteReport, write_output
from open_agent_compiler.errors import OacError
from open_agent_compiler.model.core.access_profile import AccessProfileRegistry
from open_agent_compiler.model.core.variant_spec import VariantSpec
from open_agent_compiler.model.factory import load_registry
from open_agent_compiler.model.registry import AgentRegistry, ResolvedConfig

Factory = AgentRegistry | Callable[[], AgentRegistry] | str


class CompileResult(BaseModel):
    """What one run wrote: `written_files` are absolute paths of files created or changed."""

    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)

    target: Path
    dialects: tuple[str, ...]
    written_files: tuple[Path, ...] = ()
    unchanged_files: tuple[Path, ...] = ()
    removed_files: tuple[Path, ...] = ()
    warnings: tuple[str, ...] = ()
    reports: tuple[WriteReport, ...] = ()


def _registry(factory: Factory, search_path: Path | None) -> AgentRegistry:
    if isinstance(factory, AgentRegistry):
        return factory
    if isinstance(factory, str):
        return load_registry(factory, str(search_path) if search_path else None)
    if callable(factory):
        registry = factory()
        if not isinstance(registry, AgentRegistry):
            raise OacError(f"factory {factory!r} returned {type(registry).__name__}, not an AgentRegistry")
        return registry
    raise OacError(f"factory must be an AgentRegistry, a callable or 'module:callable', not {type(factory).__name__}")


def check_access_profile(resolved: ResolvedConfig, profiles: AccessProfileRegistry | None, name: str) -> None:
    """Every resource a reachable tool requires is bound by profile `name`, and a `mock_only` binding is used
    only by tools a mock answers (the tool's own mock or a mock profile's): their tests never reach it.
    Bindings are runtime configuration for the tools; no harness file carries them."""
    if profiles is None:
        raise OacError(f"access profile {name!r} given without an AccessProfileRegistry")
    requirements = {r.tool.name: list(r.tool.requires_resources) for r in resolved.tools() if r.tool.requires_resources}
    mocked = {r.tool.name for r in resolved.tools() if r.tool.mock is not None}
    mocked |= {tool for profile in resolved.mock_profiles.values() for tool in profile.responses}
    try:
        profiles.validate_against(name, requirements, mocked)
    except ValueError as exc:
        raise OacError(str(exc)) from None


class CompileScript:
    def __init__(self, target: str | os.PathLike[str], factory: Factory, config: str, *, clean: bool = False,
                 verbose: bool = False, variants: Sequence[VariantSpec] = (),
                 dialect: str | Sequence[str] = DEFAULT_DIALECT, source_root: str | os.PathLike[str] | None = None,
                 access_profiles: AccessProfileRegistry | None = None, access_profile: str | None = None) -> None:
        self.target = Path(target)
        self.factory = factory
        self.config = config
        self.clean = clean
        self.verbose = verbose
        self.variants = tuple(variants)
        self.dialects = (dialect,) if isinstance(dialect, str) else tuple(dialect)
        self.source_root = Path(source_root) if source_root is not None else None
        self.access_profiles = access_profiles
        self.access_profile = access_profile
        for name in self.dialects:
            if name not in DIALECTS:
                get_dialect(name)  # raises the one-line error naming the known dialects

    def run(self) -> CompileResult:
        root = self.source_root or Path.cwd()
        resolved = with_variants(_registry(self.factory, root).resolve_config(self.config), self.variants)
        if self.access_profile is not None:
            check_access_profile(resolved, self.access_profiles, self.access_profile)
        outputs = [get_dialect(name).compile(resolved, source_root=root) for name in self.dialects]
        for output in outputs:  # check every write before the first one happens
            write_output(output, self.target, dialect=output.dialect, dry_run=True)
        cleaned: list[WriteReport] = []
        reports: list[WriteReport] = []
        for output in outputs:
            if self.clean:
                cleaned.append(write_output(output, self.target, dialect=output.dialect, clean=True))
            reports.append(write_output(output, self.target, dialect=output.dialect))
        # a file cleaned and then written again was replaced, not removed
        written = {rel for report in reports for rel in report.written}
        result = CompileResult(
            target=self.target,
            dialects=self.dialects,
            written_files=tuple(self.target / rel for report in reports for rel in report.written),
            unchanged_files=tuple(self.target / rel for report in reports for rel in report.unchanged),
            removed_files=tuple(self.target / rel for report in [*cleaned, *reports] for rel in report.removed
                                if rel not in written),
            warnings=tuple(warning for output in outputs for warning in output.warnings),
            reports=tuple([*cleaned, *reports]),
        )
        if self.verbose:
            self._print(result)
        return result

    def _print(self, result: CompileResult) -> None:
        for path in result.written_files:
            print(f"wrote {path}")
        for path in result.removed_files:
            print(f"removed {path}")
        for warning in result.warnings:
            print(f"warning: {warning}")
        print(f"compiled {self.config!r} for {', '.join(self.dialects)} -> {self.target}: "
              f"written={len(result.written_files)} removed={len(result.removed_files)}")
