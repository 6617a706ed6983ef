"""`oac state export` and `oac state import`: a project's shared outcomes as a JSONL file and back, so a pipeline
whose database lives only as long as its job (a CI service container) carries its greens to the next pipeline.

An import is a push: under each key the outcome that finished last wins (a pass exported before a failure never
replaces it), so importing several shards' exports in any order gives the same state. A bad line is one error
naming the file and line, and nothing is imported."""

import json
import math
import os
import time
from pathlib import Path
from typing import Any

from open_agent_compiler import fsio
from open_agent_compiler.errors import OacError
from open_agent_compiler.tasks.shared_store import Outcome, SharedStore, finished_epoch

FIELDS = ("test", "key", "status", "finished_at", "imports", "duration_s", "scope", "parts")


def export_outcomes(store: SharedStore, output: Path, since_s: float | None = None) -> int:
    """Write every outcome of the store's project to `output` (atomically); how many. `since_s`: only those that
    finished in the last so many seconds (an outcome without a readable finish time is kept)."""
    found = store.outcomes()
    if since_s is not None:
        cutoff = time.time() - since_s
        found = [o for o in found if (at := finished_epoch(o.finished_at)) is None or at >= cutoff]
    data = "".join(json.dumps(dict(zip(FIELDS, (o.task_id, o.key, o.status, o.finished_at,
                                                list(o.imports) if o.imports else None, o.duration_s, o.scope,
                                                o.parts))),
                              ensure_ascii=False, separators=(",", ":")) + "\n" for o in found)
    absolute = Path(os.path.abspath(output))
    fsio.write_file(fsio.trusted_root(absolute), str(absolute), data.encode("utf-8", "backslashreplace"),
                    show=str(output))
    return len(found)


def read_outcomes(paths: list[Path]) -> list[Outcome]:
    """The outcomes of exported files; OacError naming the file and line of the first one that is not one."""
    found: list[Outcome] = []
    for path in paths:
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise OacError(f"cannot read state export {path}: {getattr(exc, 'strerror', None) or exc}") from None
        for number, line in enumerate(text.splitlines(), 1):
            if line.strip():
                found.append(_outcome(line, f"{path}:{number}"))
    return found


def _outcome(line: str, where: str) -> Outcome:
    try:
        row: Any = json.loads(line)
    except ValueError:
        raise OacError(f"{where}: not a JSON object (a line of `oac state export`)") from None
    if not isinstance(row, dict):
        raise OacError(f"{where}: not a JSON object (a line of `oac state export`)")
    task_id, key, status, finished = (row.get(name) for name in FIELDS[:4])
    imports, duration, scope, parts = (row.get(name) for name in FIELDS[4:])
    if not (isinstance(task_id, str) and task_id and isinstance(key, str) and key):
        raise OacError(f"{where}: 'test' and 'key' must be non-empty strings")
    if status not in ("pass", "fail"):
        raise OacError(f"{where}: 'status' must be \"pass\" or \"fail\"")
    if not isinstance(finished, str):
        raise OacError(f"{where}: 'finished_at' must be a string")
    if imports is not None and not (isinstance(imports, list) and all(isinstance(i, str) for i in imports)):
        raise OacError(f"{where}: 'imports' must be a list of paths or null")
    if duration is not None and not (isinstance(duration, (int, float)) and not isinstance(duration, bool)
                                     and math.isfinite(duration)):
        raise OacError(f"{where}: 'duration_s' must be a finite number or null")
    if scope is not None and not isinstance(scope, str):
        raise OacError(f"{where}: 'scope' must be a string or null")
    if parts is not None and not isinstance(parts, dict):
        raise OacError(f"{where}: 'parts' must be an object or null")
    return Outcome(task_id, key, status, finished, tuple(imports) if imports else None,
                   float(duration) if duration is not None else None, scope, parts)
