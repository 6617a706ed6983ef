"""The mock of the tools whose output lies in a file (`mock_files_every`; copied into each generated project)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def lookup(payload: Any) -> dict[str, Any]:
    """The contents of mocks/<tool>.json, read when the test calls the tool."""
    tool = payload.get("tool") if isinstance(payload, dict) else getattr(payload, "tool", None)
    return json.loads((Path(__file__).resolve().parent / "mocks" / f"{tool}.json").read_text(encoding="utf-8"))
