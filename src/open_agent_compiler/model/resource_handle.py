"""`ResourceHandle`: what a tool's handler sees of one resource its access profile binds (the public package's
runtime view), and the environment variables a compiled tool script reads its mock and its resources from."""

import sqlite3
from pathlib import Path
from typing import Any

MOCK_ENV = "OAC_MOCK_RESPONSE"  # a JSON mock response: the script answers with it instead of running
RESOURCES_ENV = "OAC_RESOURCES_JSON"  # JSON {name: {"kind", "config", "mock_only"}}: the bound resources


class ResourceHandle:
    """One bound resource: its symbolic `name`, its `kind` and the binding's opaque `config`. A `mock_only`
    binding exists for mocked tests only: connecting through it raises, so a test that reaches it fails loudly."""

    def __init__(self, name: str, kind: str, config: dict[str, Any], *, mock_only: bool = False) -> None:
        self.name = name
        self.kind = kind
        self.config = dict(config)
        self.mock_only = mock_only

    def __repr__(self) -> str:
        return f"ResourceHandle(name={self.name!r}, kind={self.kind!r}, mock_only={self.mock_only})"

    def sqlite_connect(self) -> sqlite3.Connection:
        """A connection to a `sqlite` resource: `config["path"]` (or a `sqlite:///` `url`; none: in memory),
        read-only when `config["read_only"]`."""
        if self.mock_only:
            raise RuntimeError(f"resource {self.name!r} is bound mock_only: a real connection is not allowed")
        if self.kind != "sqlite":
            raise ValueError(f"resource {self.name!r} is of kind {self.kind!r}, not 'sqlite'")
        url = str(self.config.get("url") or "")
        path = str(self.config.get("path") or (url[len("sqlite:///"):] if url.startswith("sqlite:///") else ""))
        if not path:
            return sqlite3.connect(":memory:")
        if self.config.get("read_only"):
            return sqlite3.connect(f"{Path(path).resolve().as_uri()}?mode=ro", uri=True)
        return sqlite3.connect(path)
