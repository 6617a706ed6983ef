"""Mock callables for the slow benchmark suite (copied into each generated project)."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

_SPEC = json.loads((Path(__file__).resolve().parent / "bench_spec.json").read_text(encoding="utf-8"))
SECONDS = _SPEC["slow_ms"] / 1000.0
BUSY = _SPEC.get("slow_kind", "sleep") == "busy"


def _field(payload: Any, key: str) -> Any:
    if isinstance(payload, dict):
        return payload.get(key)
    return getattr(payload, key, None)


def slow(payload: Any) -> dict[str, Any]:
    """Take ~SECONDS (sleeping, or spinning the CPU when the spec says `busy`), then echo the query."""
    deadline = time.perf_counter() + SECONDS
    if BUSY:
        while time.perf_counter() < deadline:
            pass
    else:
        time.sleep(SECONDS)
    return {"echo": _field(payload, "q")}
