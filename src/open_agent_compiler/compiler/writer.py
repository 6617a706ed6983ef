"""The side-effect edge: put a `CompiledOutput` into a target directory, incrementally and safely.

Rules:
- Everything is planned and checked first (paths stay inside the target, also through symlinks; user JSON and
  marked blocks parse); nothing is written if any check fails.
- A file whose bytes already match is not rewritten (its mtime stays). Writes are atomic (temp file in the
  same directory, then `os.replace`).
- Only files the manifest says we wrote are ever replaced or removed, and only while they still hold the bytes
  we wrote; anything else is kept and reported. Symlinks are never followed or replaced.
- `.claude/settings.json` and `AGENTS.md` are merged: the user's content stays; we replace only our rules or
  our marked block.
- `clean=True` takes back everything this dialect's manifest lists (same rules) and prunes now-empty
  directories we created; it writes nothing new.
"""

import json
import os
import tempfile
from pathlib import Path, PurePosixPath
from typing import Any

from pydantic import BaseModel, ConfigDict

from open_agent_compiler.compiler.blocks import apply_block
from open_agent_compiler.compiler.manifest import (
    MANIFEST_PATH,
    BlockRecord,
    DialectRecord,
    Manifest,
    SettingsRecord,
    dump_manifest,
    load_manifest,
)
from open_agent_compiler.compiler.output import CompiledFile, CompiledOutput, check_output_path, render_json
from open_agent_compiler.compiler.settings_merge import merge_permission_rules
from open_agent_compiler.errors import OacError
from open_agent_compiler.model.hashing import digest_bytes


class Kept(BaseModel):
    model_config = ConfigDict(frozen=True)

    path: str
    reason: str


class WriteReport(BaseModel):
    model_config = ConfigDict(frozen=True)

    dialect: str
    target: str
    dry_run: bool = False
    written: tuple[str, ...] = ()
    unchanged: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()
    kept: tuple[Kept, ...] = ()


class _Op(BaseModel):
    model_config = ConfigDict(frozen=True)

    path: str
    data: bytes | None  # None = remove
    executable: bool = False


NOT_OURS = "not written by oac; left alone"
CHANGED = "changed since oac wrote it; left alone"
LINK = "is a symbolic link; left alone"


class _Plan:
    def __init__(self, root: Path, dialect: str, manifest: Manifest) -> None:
        self.root = root
        self.real_root = os.path.realpath(root)
        self.dialect = dialect
        self.old = manifest.dialects.get(dialect, DialectRecord())
        self.others = manifest.files_of_others(dialect)
        self.new = DialectRecord(dirs=list(self.old.dirs))
        self.ops: list[_Op] = []
        self.written: list[str] = []
        self.unchanged: list[str] = []
        self.removed: list[str] = []
        self.kept: list[Kept] = []

    # checks and reads --------------------------------------------------------------------------------------
    def inside(self, rel: str) -> Path:
        """`rel` under the target, refused if it resolves elsewhere (e.g. through a symlinked directory)."""
        path = self.root / rel
        real = os.path.realpath(path)
        if real != self.real_root and not real.startswith(self.real_root + os.sep):
            raise OacError(f"refusing to write {rel}: it resolves outside the target directory ({real})")
        return path

    def dest(self, rel: str) -> Path:
        return self.inside(check_output_path(rel, "output path"))

    def read(self, rel: str) -> bytes | None:
        path = self.dest(rel)
        if path.is_dir() and not path.is_symlink():
            raise OacError(f"cannot write {rel}: a directory is in the way")
        try:
            return path.read_bytes()
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise OacError(f"cannot read {rel}: {exc.strerror}") from None

    def is_link(self, rel: str) -> bool:
        return (self.root / rel).is_symlink()

    # planning ----------------------------------------------------------------------------------------------
    def write(self, rel: str, data: bytes, executable: bool = False) -> None:
        self.ops.append(_Op(path=rel, data=data, executable=executable))
        self.written.append(rel)
        for parent in list(PurePosixPath(rel).parents)[:-1]:
            if not (self.root / parent).exists() and str(parent) not in self.new.dirs:
                self.new.dirs.append(str(parent))

    def remove(self, rel: str) -> None:
        self.ops.append(_Op(path=rel, data=None))
        self.removed.append(rel)

    def file(self, compiled: CompiledFile) -> None:
        rel = compiled.path
        current = self.read(rel)
        ours = self.old.files.get(rel) or self.others.get(rel)
        if current is not None and self.is_link(rel):
            self.kept.append(Kept(path=rel, reason=LINK))
        elif current is None or (ours is not None and digest_bytes(current) == ours and current != compiled.content):
            self.write(rel, compiled.content, compiled.executable)
            self.new.files[rel] = digest_bytes(compiled.content)
        elif ours is None:
            self.kept.append(Kept(path=rel, reason=NOT_OURS))
        elif current == compiled.content:
            self.unchanged.append(rel)
            self.new.files[rel] = ours
        else:
            self.kept.append(Kept(path=rel, reason=CHANGED))
            if rel in self.old.files:  # still ours: taken back only if its bytes return to what we wrote
                self.new.files[rel] = self.old.files[rel]

    def stale(self, rel: str, digest: str) -> None:
        """A file we wrote last time that this compile no longer produces."""
        current = self.read(rel)
        if current is None or rel in self.others or self.is_link(rel):
            return
        if digest_bytes(current) == digest:
            self.remove(rel)
        else:
            self.kept.append(Kept(path=rel, reason=CHANGED))

    def linked(self, rel: str) -> bool:
        """A symlink at a merged file's path: kept as it is (our earlier record, if any, stays)."""
        if not self.is_link(rel):
            return False
        self.kept.append(Kept(path=rel, reason=LINK))
        if rel in self.old.settings:
            self.new.settings[rel] = self.old.settings[rel]
        if rel in self.old.blocks:
            self.new.blocks[rel] = self.old.blocks[rel]
        return True

    def settings(self, rel: str, rules: dict[str, tuple[str, ...]]) -> None:
        raw = self.read(rel)
        if self.linked(rel):
            return
        existing: Any = None
        if raw is not None:
            try:
                existing = json.loads(raw.decode("utf-8")) if raw.strip() else {}
            except (UnicodeDecodeError, json.JSONDecodeError) as exc:
                raise OacError(f"{rel} is not valid JSON ({exc}); fix it so oac can merge its rules") from None
            if not isinstance(existing, dict):
                raise OacError(f"{rel} must hold a JSON object to merge permission rules into")
        record = self.old.settings.get(rel)
        created = record.created if record is not None else raw is None
        merged, owned = merge_permission_rules(existing, record.rules if record else {}, rules, where=rel)
        if not merged and (created or raw is None):
            if raw is not None:
                self.remove(rel)
            return
        if merged == existing:
            self.unchanged.append(rel)
        else:
            self.write(rel, render_json(merged))
        if owned:
            self.new.settings[rel] = SettingsRecord(created=created, rules=owned)

    def block(self, rel: str, marker: str, content: str | None) -> None:
        raw = self.read(rel)
        if self.linked(rel):
            return
        try:
            text = None if raw is None else raw.decode("utf-8")
        except UnicodeDecodeError:
            raise OacError(f"{rel} is not UTF-8 text; oac cannot manage its block in it") from None
        record = self.old.blocks.get(rel)
        created = record.created if record is not None else raw is None
        updated = apply_block(text, marker, content, where=rel)
        if updated is None:
            return
        if content is None and created and not updated.strip():
            self.remove(rel)
            return
        if updated != text:
            self.write(rel, updated.encode("utf-8"))
        elif content is not None:
            self.unchanged.append(rel)
        if content is not None:
            self.new.blocks[rel] = BlockRecord(created=created, marker=marker)


def _plan(output: CompiledOutput, root: Path, manifest: Manifest, clean: bool) -> _Plan:
    plan = _Plan(root, output.dialect, manifest)
    plan.inside(MANIFEST_PATH)
    files = () if clean else output.files
    settings = {} if clean else {fragment.path: fragment.rules() for fragment in output.settings}
    blocks = {} if clean else {block.path: block for block in output.blocks}
    for compiled in files:
        plan.file(compiled)
    produced = {compiled.path for compiled in files}
    for rel, digest in plan.old.files.items():
        if rel not in produced:
            plan.stale(rel, digest)
    for rel in {**plan.old.settings, **settings}:
        plan.settings(rel, settings.get(rel, {}))
    for rel, record in plan.old.blocks.items():
        if rel not in blocks:
            plan.block(rel, record.marker, None)
    for rel, block in blocks.items():
        plan.block(rel, block.marker, block.content)
    return plan


def _atomic_write(path: Path, data: bytes, executable: bool) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, temp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".oac-tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(temp, 0o755 if executable else 0o644)
        os.replace(temp, path)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise


def _prune(root: Path, dirs: list[str]) -> list[str]:
    """Remove the directories we created that are now empty, deepest first; return those still there."""
    left = []
    for rel in sorted(dirs, key=lambda d: d.count("/"), reverse=True):
        path = root / rel
        if path.is_dir() and not path.is_symlink() and not any(path.iterdir()):
            path.rmdir()
        elif path.is_dir():
            left.append(rel)
    return sorted(left)


def _apply(plan: _Plan, manifest: Manifest) -> None:
    root = plan.root
    for op in plan.ops:
        if op.data is None:
            (root / op.path).unlink(missing_ok=True)
        else:
            _atomic_write(root / op.path, op.data, op.executable)
    manifest.dialects[plan.dialect] = plan.new
    # A directory one dialect created may be emptied by another (shared scripts): prune across all records.
    left = set(_prune(root, sorted({d for record in manifest.dialects.values() for d in record.dirs})))
    for name, record in list(manifest.dialects.items()):
        record.dirs = [d for d in record.dirs if d in left]
        if record.is_empty():
            del manifest.dialects[name]
    manifest_path = root / MANIFEST_PATH
    if manifest.dialects:
        data = dump_manifest(manifest)
        if not manifest_path.is_file() or manifest_path.read_bytes() != data:
            _atomic_write(manifest_path, data, False)
    elif manifest_path.exists():
        manifest_path.unlink()
        if not any(manifest_path.parent.iterdir()):
            manifest_path.parent.rmdir()


def write_output(
    output: CompiledOutput, target_dir: str | os.PathLike[str], *, dialect: str, clean: bool = False,
    dry_run: bool = False,
) -> WriteReport:
    """Write (or with `clean`, take back) `output` under `target_dir`. `dry_run` plans and checks only."""
    if output.dialect != dialect:
        raise ValueError(f"output is for dialect {output.dialect!r}, not {dialect!r}")
    root = Path(target_dir)
    if root.exists() and not root.is_dir():
        raise OacError(f"target {root} exists and is not a directory")
    manifest = load_manifest(root)
    plan = _plan(output, root, manifest, clean)
    if not dry_run:
        try:
            root.mkdir(parents=True, exist_ok=True)
            _apply(plan, manifest)
        except OSError as exc:
            raise OacError(f"cannot update {exc.filename or root}: {exc.strerror}") from None
    return WriteReport(
        dialect=dialect, target=str(root), dry_run=dry_run, written=tuple(plan.written),
        unchanged=tuple(plan.unchanged), removed=tuple(plan.removed), kept=tuple(plan.kept),
    )
