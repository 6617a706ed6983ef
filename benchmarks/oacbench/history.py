"""Pre-fill a results file with a long, realistic history: older copies of the implementation's own records."""

from __future__ import annotations

import hashlib
import json
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

HEX_KEYS = ("run_id", "agent_state_hash", "composite_hash")
FAIL_EVERY = 29  # a few historical failures, as in a real project's log


def _derive_hex(value: Any, generation: int) -> Any:
    if not isinstance(value, str) or not value:
        return value
    digest = hashlib.sha256(f"{value}:{generation}".encode()).hexdigest()
    return (digest * (len(value) // len(digest) + 1))[: len(value)]


def _older(record: dict[str, Any], generation: int, index: int) -> dict[str, Any]:
    """`record` as it might have been written `generation` days earlier, against an older definition."""
    old = dict(record)
    stamp = old.get("timestamp")
    if isinstance(stamp, str):
        parsed = datetime.fromisoformat(stamp) - timedelta(days=generation)
        spec = "milliseconds" if "." in stamp else "seconds"
        old["timestamp"] = parsed.isoformat(timespec=spec)
    for key in HEX_KEYS:
        if key in old:
            old[key] = _derive_hex(old[key], generation)
    if index % FAIL_EVERY == 0:
        old["passed"] = False
        old["score"] = 0.0
        if "status" in old:
            old["status"] = "fail"
    return old


def prefill(results: Path, total_lines: int) -> int:
    """Rewrite `results` as (total_lines - current) older records followed by the current ones. Returns the
    number of lines written. The current records stay last, so the implementation's green state is intact."""
    current = [line for line in results.read_bytes().splitlines() if line.strip()]
    if not current:
        raise ValueError(f"{results} is empty: run the suite once before pre-filling its history")
    records = [json.loads(line) for line in current]
    missing = max(0, total_lines - len(current))
    with results.open("wb") as handle:
        for index in range(missing):
            generation = missing // len(records) - index // len(records) + 1
            older = _older(records[index % len(records)], generation, index)
            handle.write(json.dumps(older, separators=(",", ":")).encode() + b"\n")
        for line in current:
            handle.write(line + b"\n")
    return missing + len(current)


def truncate(results: Path) -> None:
    results.parent.mkdir(parents=True, exist_ok=True)
    results.write_bytes(b"")
