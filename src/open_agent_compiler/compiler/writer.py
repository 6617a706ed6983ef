"""The side-effect edge: put a `CompiledOutput` into a target directory, incrementally and safely.

Rules:
- Everything is planned and checked first (paths stay inside the target; no symlinked directory on the way;
  user JSON and marked blocks parse); nothing is written if any check fails.
- Every file goes through `fsio`: a regular file, written atomically (temp files in the same directory, made
  durable together with one sync of the filesystem, renamed, synced again, then the manifest), with the umask's mode (0o600 for files holding secrets); a symlink at a compiled path is kept.
- A file whose bytes already match is not rewritten (its mtime stays), and is ours from then on — also on a
  fresh clone, where the manifest (in the git-ignored `.oac/`) is missing.
- Only files the manifest says we wrote are ever replaced or removed, and only while they still hold the bytes
  we wrote; anything else is kept and reported, unless `adopt` takes files at compiled paths over.
- `.claude/settings.json` and `AGENTS.md` are merged: the user's content stays; we replace only our rules or
  our marked block.
- `clean=True` takes back everything this dialect's manifest lists (same rules) and prunes now-empty
  directories we created (real directories only, reached without symlinks); it writes nothing new.
- Compiles into one target are serialised by a lock in `.oac/`, and the manifest is journaled (see
  `compiler.manifest`): a compile killed part-way never leaves a file its manifest disowns.
"""

import json
import os
from pathlib import Path, PurePosixPath
from typing import Any

from pydantic import BaseModel, ConfigDict

from open_agent_compiler import fsio
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

LOCK_PATH = ".oac/compile.lock"


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
    adopted: tuple[str, ...] = ()  # written over a file oac had not written (or one changed since): `adopt`


class _Op(BaseModel):
    model_config = ConfigDict(frozen=True)

    path: str
    data: bytes | None  # None = remove
    executable: bool = False
    private: bool = False
    merged: bool = False  # a user's file we merge into: its mode stays


NOT_OURS = "not written by oac; left alone"
CHANGED = "changed since oac wrote it; left alone"
LINK = "is a symbolic link; left alone"


class _Plan:
    def __init__(self, root: Path, dialect: str, manifest: Manifest, adopt: bool = False) -> None:
        self.root = root
        self.dialect = dialect
        self.adopt = adopt
        self.old = manifest.dialects.get(dialect, DialectRecord())
        self.others = manifest.files_of_others(dialect)
        self.new = DialectRecord(dirs=list(self.old.dirs))
        self.confirmed: dict[str, str] = {}  # path → digest of the bytes of ours on disk now (for the journal)
        self.ops: list[_Op] = []
        self.written: list[str] = []
        self.unchanged: list[str] = []
        self.removed: list[str] = []
        self.kept: list[Kept] = []
        self.adopted: list[str] = []

    # checks and reads --------------------------------------------------------------------------------------
    def entry(self, rel: str) -> fsio.Entry:
        """What is at `rel`: a file (with its bytes), a symlink, or nothing; anything else is an error, and so
        is a symlinked directory on the way."""
        entry = fsio.inspect(self.root, check_output_path(rel, "output path"))
        if entry.kind not in ("absent", "file", "symbolic link"):
            raise OacError(f"cannot write {rel}: a {entry.kind} is in the way")
        return entry

    def known(self, rel: str) -> set[str]:
        """Digests of the bytes any dialect wrote (or was writing) at `rel`."""
        found = set(self.others.get(rel, ()))
        found.update(d for d in (self.old.files.get(rel), self.old.pending.get(rel)) if d)
        return found

    # planning ----------------------------------------------------------------------------------------------
    def write(self, rel: str, data: bytes, executable: bool = False, private: bool = False,
              merged: bool = False) -> None:
        self.ops.append(_Op(path=rel, data=data, executable=executable, private=private, merged=merged))
        self.written.append(rel)
        for parent in list(PurePosixPath(rel).parents)[:-1]:
            if not (self.root / parent).is_dir() and str(parent) not in self.new.dirs:
                self.new.dirs.append(str(parent))

    def remove(self, rel: str) -> None:
        self.ops.append(_Op(path=rel, data=None))
        self.removed.append(rel)

    def file(self, compiled: CompiledFile) -> None:
        rel = compiled.path
        entry = self.entry(rel)
        current = entry.data
        known = self.known(rel)
        if entry.kind == "symbolic link":
            self.kept.append(Kept(path=rel, reason=LINK))
        elif current == compiled.content:  # also a fresh clone's copy of what we wrote: ours again
            self.unchanged.append(rel)
            self.new.files[rel] = digest_bytes(current)
        elif current is None or digest_bytes(current) in known or self.adopt:
            if current is not None:
                self.confirmed[rel] = digest_bytes(current)
                if digest_bytes(current) not in known:
                    self.adopted.append(rel)
            self.write(rel, compiled.content, compiled.executable, compiled.private)
            self.new.files[rel] = digest_bytes(compiled.content)
        elif not known:
            self.kept.append(Kept(path=rel, reason=NOT_OURS))
        else:
            self.kept.append(Kept(path=rel, reason=CHANGED))
            if rel in self.old.files:  # still ours: taken back only if its bytes return to what we wrote
                self.new.files[rel] = self.old.files[rel]

    def stale(self, rel: str) -> None:
        """A file we wrote (or were writing) last time that this compile no longer produces."""
        entry = self.entry(rel)
        if entry.data is None or rel in self.others:
            return
        current = digest_bytes(entry.data)
        if current in {self.old.files.get(rel), self.old.pending.get(rel)}:
            self.confirmed[rel] = current
            self.remove(rel)
        else:
            self.kept.append(Kept(path=rel, reason=CHANGED))

    def linked(self, rel: str, entry: fsio.Entry) -> bool:
        """A symlink at a merged file's path: kept as it is (our earlier record, if any, stays)."""
        if entry.kind != "symbolic link":
            return False
        self.kept.append(Kept(path=rel, reason=LINK))
        if rel in self.old.settings:
            self.new.settings[rel] = self.old.settings[rel]
        if rel in self.old.blocks:
            self.new.blocks[rel] = self.old.blocks[rel]
        return True

    def intent(self) -> DialectRecord:
        """The journal record saved before any file changes: every file of ours on disk now or after this
        compile, under its current and its new digest; rules, blocks and directories of before and after."""
        pending = {op.path: digest_bytes(op.data) for op in self.ops if op.data is not None and not op.merged}
        settings = {}
        for rel in {**self.old.settings, **self.new.settings}:
            before, after = self.old.settings.get(rel), self.new.settings.get(rel)
            rules: dict[str, list[str]] = {}
            for record in (before, after):
                for kind, listed in (record.rules if record else {}).items():
                    rules[kind] = list(dict.fromkeys([*rules.get(kind, []), *listed]))
            settings[rel] = SettingsRecord(created=(before or after).created, rules=rules)  # type: ignore[union-attr]
        return DialectRecord(
            files={**self.old.files, **self.confirmed}, dirs=sorted({*self.old.dirs, *self.new.dirs}),
            settings=settings, blocks={**self.old.blocks, **self.new.blocks}, pending=pending,
        )

    def settings(self, rel: str, rules: dict[str, tuple[str, ...]]) -> None:
        entry = self.entry(rel)
        raw = entry.data
        if self.linked(rel, entry):
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
        if record is None and raw is not None and rules and raw == render_json(
                merge_permission_rules(None, {}, rules, where=rel)[0]):
            # exactly the file we would create (a fresh clone of it): ours, rules and all
            owned = {kind: list(listed) for kind, listed in rules.items() if listed}
            record = SettingsRecord(created=True, rules=owned)
        created = record.created if record is not None else raw is None
        merged, owned = merge_permission_rules(existing, record.rules if record else {}, rules, where=rel)
        if not merged and (created or raw is None):
            if raw is not None:
                self.remove(rel)
            return
        if merged == existing:
            self.unchanged.append(rel)
        else:
            self.write(rel, render_json(merged), merged=True)
        if owned:
            self.new.settings[rel] = SettingsRecord(created=created, rules=owned)

    def block(self, rel: str, marker: str, content: str | None) -> None:
        entry = self.entry(rel)
        raw = entry.data
        if self.linked(rel, entry):
            return
        try:
            text = None if raw is None else raw.decode("utf-8")
        except UnicodeDecodeError:
            raise OacError(f"{rel} is not UTF-8 text; oac cannot manage its block in it") from None
        record = self.old.blocks.get(rel)
        if record is None and text is not None and content is not None and text == apply_block(
                None, marker, content, where=rel):
            record = BlockRecord(created=True, marker=marker)  # exactly the file we would create: ours
        created = record.created if record is not None else raw is None
        updated = apply_block(text, marker, content, where=rel)
        if updated is None:
            return
        if content is None and created and not updated.strip():
            self.remove(rel)
            return
        if updated != text:
            self.write(rel, updated.encode("utf-8"), merged=True)
        elif content is not None:
            self.unchanged.append(rel)
        if content is not None:
            self.new.blocks[rel] = BlockRecord(created=created, marker=marker)


def _plan(output: CompiledOutput, root: Path, manifest: Manifest, clean: bool, adopt: bool) -> _Plan:
    plan = _Plan(root, output.dialect, manifest, adopt)
    files = () if clean else output.files
    settings = {} if clean else {fragment.path: fragment.rules() for fragment in output.settings}
    blocks = {} if clean else {block.path: block for block in output.blocks}
    for compiled in files:
        plan.file(compiled)
    produced = {compiled.path for compiled in files}
    for rel in {**plan.old.files, **plan.old.pending}:
        if rel not in produced and rel not in plan.old.settings and rel not in plan.old.blocks:
            plan.stale(rel)
    for rel in {**plan.old.settings, **settings}:
        plan.settings(rel, settings.get(rel, {}))
    for rel, record in plan.old.blocks.items():
        if rel not in blocks:
            plan.block(rel, record.marker, None)
    for rel, block in blocks.items():
        plan.block(rel, block.marker, block.content)
    return plan


def _prune(root: Path, dirs: list[str]) -> list[str]:
    """Remove the directories we created that are now empty, deepest first; return those still there. Only
    real directories reached without symlinks are removed (fsio)."""
    left = []
    for rel in sorted(dirs, key=lambda d: d.count("/"), reverse=True):
        if not fsio.remove_empty_dir(root, rel):
            left.append(rel)
    return sorted(left)


def _save(root: Path, manifest: Manifest) -> None:
    fsio.write_file(root, MANIFEST_PATH, dump_manifest(manifest), fixed_temp=True)


def _recover(root: Path, manifest: Manifest) -> None:
    """Remove temp files a killed compile left next to any file the manifest lists (we hold the lock, so no
    other compile is writing them now)."""
    fsio.remove_leftover_temp(root, MANIFEST_PATH)
    for record in manifest.dialects.values():
        for rel in {*record.files, *record.pending, *record.settings, *record.blocks}:
            fsio.remove_leftover_temp(root, rel)


def _apply(plan: _Plan, manifest: Manifest) -> None:
    """Journal, write, commit. The files are written as one `fsio.Batch`: every temp file first, one sync of
    the filesystem, the renames, one more sync, and only then the manifest (issue 18: two fsyncs per file were
    ~6 s of a cold compile of 1,000 agents)."""
    root = plan.root
    if plan.ops:
        manifest.dialects[plan.dialect] = plan.intent()
        _save(root, manifest)
    batch = fsio.Batch()
    try:
        for op in plan.ops:
            if op.data is None:
                fsio.remove_file(root, op.path)
            else:
                fsio.write_file(root, op.path, op.data, executable=op.executable, private=op.private,
                                keep_mode=op.merged, fixed_temp=True, batch=batch)
        batch.commit()
    finally:
        batch.discard()  # after an error: no temp file stays (the journal still lists every path as ours)
    manifest.dialects[plan.dialect] = plan.new
    # A directory one dialect created may be emptied by another (shared scripts): prune across all records.
    left = set(_prune(root, sorted({d for record in manifest.dialects.values() for d in record.dirs})))
    for name, record in list(manifest.dialects.items()):
        record.dirs = [d for d in record.dirs if d in left]
        if record.is_empty():
            del manifest.dialects[name]
    if manifest.dialects:
        data = dump_manifest(manifest)
        if fsio.inspect(root, MANIFEST_PATH).data != data:
            _save(root, manifest)
    else:
        fsio.remove_file(root, MANIFEST_PATH)


def write_output(
    output: CompiledOutput, target_dir: str | os.PathLike[str], *, dialect: str, clean: bool = False,
    dry_run: bool = False, adopt: bool = False,
) -> WriteReport:
    """Write (or with `clean`, take back) `output` under `target_dir`. `dry_run` plans and checks only;
    `adopt` takes over files at compiled paths that oac did not write or that were changed since."""
    if output.dialect != dialect:
        raise ValueError(f"output is for dialect {output.dialect!r}, not {dialect!r}")
    root = Path(target_dir)
    if root.exists() and not root.is_dir():
        raise OacError(f"target {root} exists and is not a directory")
    if dry_run:
        plan = _plan(output, root, load_manifest(root), clean, adopt)
    else:
        try:
            root.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise OacError(f"cannot create target {root}: {exc.strerror}") from None
        try:
            with fsio.exclusive_lock(root, LOCK_PATH):
                manifest = load_manifest(root)
                _recover(root, manifest)
                plan = _plan(output, root, manifest, clean, adopt)
                _apply(plan, manifest)
        finally:  # leave no empty `.oac/` behind (the lock file is gone; a concurrent compile's stays)
            fsio.remove_empty_dir(root, ".oac")
    return WriteReport(
        dialect=dialect, target=str(root), dry_run=dry_run, written=tuple(plan.written),
        unchanged=tuple(plan.unchanged), removed=tuple(plan.removed), kept=tuple(plan.kept),
        adopted=tuple(plan.adopted),
    )
