"""What a compile produces, in memory: whole files we own, plus fragments merged into files the user owns."""

import json

from pydantic import BaseModel, ConfigDict, Field, model_validator

from open_agent_compiler.compiler.blocks import apply_block
from open_agent_compiler.compiler.settings_merge import RULE_KINDS, merge_permission_rules
from open_agent_compiler.errors import UnsafeNameError
from open_agent_compiler.model.core.base import SharedFieldsSet
from open_agent_compiler.model.names import check_relative_path, relative_parts

# Top-level directories no compiled path may enter: our own state, and git's.
RESERVED_ROOTS = (".oac", ".git")


def check_output_path(path: str, what: str) -> str:
    """A path we emit: relative, inside the target, and outside the reserved directories."""
    check_relative_path(path, what)
    parts = relative_parts(path)
    first = parts[0] if parts else ""
    if first in RESERVED_ROOTS:
        raise UnsafeNameError(f"unsafe {what} {path!r}: {first}/ is reserved")
    return path


class CompiledFile(SharedFieldsSet):
    """One file we own entirely. `path` is relative to the target directory, POSIX separators. `private`:
    it holds secrets (an MCP server's environment), so it is written 0o600 whatever the umask."""

    model_config = ConfigDict(frozen=True)

    path: str
    content: bytes
    executable: bool = False
    private: bool = False


class SettingsFragment(BaseModel):
    """Permission rules to merge into a JSON settings file under `permissions.allow/ask/deny`."""

    model_config = ConfigDict(frozen=True)

    path: str
    allow: tuple[str, ...] = ()
    ask: tuple[str, ...] = ()
    deny: tuple[str, ...] = ()

    def rules(self) -> dict[str, tuple[str, ...]]:
        return {kind: getattr(self, kind) for kind in RULE_KINDS}


class ManagedBlock(BaseModel):
    """A marked block inside a text file the user may also edit (see `compiler.blocks`)."""

    model_config = ConfigDict(frozen=True)

    path: str
    marker: str
    content: str


class CompiledOutput(BaseModel):
    model_config = ConfigDict(frozen=True)

    dialect: str
    files: tuple[CompiledFile, ...] = ()
    settings: tuple[SettingsFragment, ...] = ()
    blocks: tuple[ManagedBlock, ...] = Field(default=())
    # What the compile could not express for this harness (one line each, naming dialect and agent).
    warnings: tuple[str, ...] = ()

    @model_validator(mode="after")
    def _paths_are_safe_and_unique(self) -> "CompiledOutput":
        seen: set[str] = set()
        for what, path in [
            *(("output file", f.path) for f in self.files),
            *(("settings file", s.path) for s in self.settings),
            *(("managed file", b.path) for b in self.blocks),
        ]:
            check_output_path(path, what)
            if path in seen:
                raise UnsafeNameError(f"two compiled outputs would be written to {path!r}")
            seen.add(path)
        return self

    def file_map(self) -> dict[str, bytes]:
        """Every output as the bytes it would have in an empty target: for reading capabilities back."""
        files = {f.path: f.content for f in self.files}
        for fragment in self.settings:
            merged, _ = merge_permission_rules(None, {}, fragment.rules(), where=fragment.path)
            files[fragment.path] = render_json(merged)
        for block in self.blocks:
            text = apply_block(None, block.marker, block.content, where=block.path)
            files[block.path] = (text or "").encode()
        return files


def render_json(data: object) -> bytes:
    return (json.dumps(data, indent=2, ensure_ascii=False) + "\n").encode()
