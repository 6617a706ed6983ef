"""`<target>/.oac/manifest.json`: what each dialect's last compile wrote into a target, so the next one can
update, remove or clean exactly that and nothing else.

Format (version 1)::

    {"version": 1,
     "dialects": {"claude": {
        "files": {"<relative path>": "<xxh3-128 of the bytes we wrote>", ...},
        "dirs": ["<relative dir we created>", ...],
        "settings": {".claude/settings.json": {"created": false, "rules": {"allow": ["Bash(x *)"]}}},
        "blocks": {"AGENTS.md": {"created": true, "marker": "codex-agents"}},
        "pending": {"<relative path>": "<xxh3-128 of the bytes about to be written>", ...}}}}

`rules` holds only the rules we added (never ones the user already had); `created` says the file did not
exist before we wrote it, so we may delete it once nothing of ours or the user's is left in it.

`pending` is the journal: before a compile changes a file it saves the manifest with the new file's digest
there (and the union of old and new rules, blocks and directories), then writes the files, then saves the
record without `pending`. A compile killed in between leaves every file it touched listed as ours, under its
old or its new digest; the next compile of any dialect removes its leftover temp files and takes it from there.

Every path is checked on load: relative, inside the target, outside `.oac/` and `.git/`; a manifest naming any
other path is damaged and is not used.
"""

import json
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from open_agent_compiler.compiler.output import check_output_path
from open_agent_compiler.errors import OacError, UnsafeNameError
from open_agent_compiler.fsio import inspect

MANIFEST_PATH = ".oac/manifest.json"
VERSION = 1


class SettingsRecord(BaseModel):
    model_config = ConfigDict(extra="forbid")

    created: bool = False
    rules: dict[str, list[str]] = Field(default_factory=dict)


class BlockRecord(BaseModel):
    model_config = ConfigDict(extra="forbid")

    created: bool = False
    marker: str


class DialectRecord(BaseModel):
    model_config = ConfigDict(extra="forbid")

    files: dict[str, str] = Field(default_factory=dict)
    dirs: list[str] = Field(default_factory=list)
    settings: dict[str, SettingsRecord] = Field(default_factory=dict)
    blocks: dict[str, BlockRecord] = Field(default_factory=dict)
    pending: dict[str, str] = Field(default_factory=dict)

    def is_empty(self) -> bool:
        return not (self.files or self.dirs or self.settings or self.blocks or self.pending)

    def paths(self) -> list[str]:
        return [*self.files, *self.dirs, *self.settings, *self.blocks, *self.pending]


class Manifest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    version: int = VERSION
    dialects: dict[str, DialectRecord] = Field(default_factory=dict)

    def files_of_others(self, dialect: str) -> dict[str, set[str]]:
        """Files other dialects wrote or were writing (path → digests): shared outputs such as tool scripts."""
        found: dict[str, set[str]] = {}
        for name, record in self.dialects.items():
            if name != dialect:
                for rel, digest in [*record.files.items(), *record.pending.items()]:
                    found.setdefault(rel, set()).add(digest)
        return found


def load_manifest(root: Path) -> Manifest:
    path = root / MANIFEST_PATH
    entry = inspect(root, MANIFEST_PATH, show=str(path))
    if entry.kind == "absent":
        return Manifest()
    if entry.data is None:
        raise OacError(f"{path} is a {entry.kind}, not a file; remove it so oac can keep its manifest there")
    damaged = (f"{path} is damaged; delete it to start over (oac then adopts files whose bytes are what it "
               "would write and leaves every other file alone)")
    try:
        manifest = Manifest.model_validate(json.loads(entry.data.decode("utf-8")))
    except (UnicodeDecodeError, json.JSONDecodeError, ValidationError):
        raise OacError(damaged) from None
    for record in manifest.dialects.values():
        for rel in record.paths():
            try:
                check_output_path(rel, "output path")
            except UnsafeNameError as exc:
                raise OacError(f"{damaged.split(';')[0]} ({exc}); delete it to start over") from None
    if manifest.version != VERSION:
        raise OacError(f"{root / MANIFEST_PATH} has version {manifest.version}; this oac reads version {VERSION}")
    return manifest


def dump_manifest(manifest: Manifest) -> bytes:
    data = manifest.model_dump(mode="json")
    for record in data["dialects"].values():
        if not record["pending"]:  # a committed record: no journal entries
            del record["pending"]
    return (json.dumps(data, indent=2, sort_keys=True) + "\n").encode()
