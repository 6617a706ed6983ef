"""`<target>/.oac/manifest.json`: what each dialect's last compile wrote into a target, so the next one can
update, remove or clean exactly that and nothing else.

Format (version 1)::

    {"version": 1,
     "dialects": {"claude": {
        "files": {"<relative path>": "<xxh3-128 of the bytes we wrote>", ...},
        "dirs": ["<relative dir we created>", ...],
        "settings": {".claude/settings.json": {"created": false, "rules": {"allow": ["Bash(x *)"]}}},
        "blocks": {"AGENTS.md": {"created": true, "marker": "codex-agents"}}}}}

`rules` holds only the rules we added (never ones the user already had); `created` says the file did not
exist before we wrote it, so we may delete it once nothing of ours or the user's is left in it.
"""

import json
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from open_agent_compiler.errors import OacError

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

    def is_empty(self) -> bool:
        return not (self.files or self.dirs or self.settings or self.blocks)


class Manifest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    version: int = VERSION
    dialects: dict[str, DialectRecord] = Field(default_factory=dict)

    def files_of_others(self, dialect: str) -> dict[str, str]:
        """Files other dialects wrote (path → digest): shared outputs such as tool scripts."""
        found: dict[str, str] = {}
        for name, record in self.dialects.items():
            if name != dialect:
                found.update(record.files)
        return found


def load_manifest(root: Path) -> Manifest:
    path = root / MANIFEST_PATH
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return Manifest()
    except OSError as exc:
        raise OacError(f"cannot read {MANIFEST_PATH} in {root}: {exc.strerror}") from None
    try:
        manifest = Manifest.model_validate(json.loads(data.decode("utf-8")))
    except (UnicodeDecodeError, json.JSONDecodeError, ValidationError):
        raise OacError(
            f"{root / MANIFEST_PATH} is damaged; delete it to start over (oac then treats every existing file "
            "as yours and leaves it alone)"
        ) from None
    if manifest.version != VERSION:
        raise OacError(f"{root / MANIFEST_PATH} has version {manifest.version}; this oac reads version {VERSION}")
    return manifest


def dump_manifest(manifest: Manifest) -> bytes:
    return (json.dumps(manifest.model_dump(mode="json"), indent=2, sort_keys=True) + "\n").encode()
