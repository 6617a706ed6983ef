"""Profile one `oac test` run in-process with cProfile; runs under OUR venv's Python (standard library only).

    python profile_child.py OUT_PREFIX -- oac test agents:registry --config prod --results R

Writes OUT_PREFIX.prof (raw pstats) and OUT_PREFIX.json: total time, the top functions by own time, our own
functions by cumulative time, and own time summed per package/module ("buckets"). Imports are profiled too.
"""

from __future__ import annotations

import cProfile
import json
import pstats
import re
import sys
from pathlib import Path
from typing import Any

from in_process import command_line, run_oac

TOP = 25
BUILTIN_OWNER = re.compile(r"of '([\w.]+)' objects|built-in method ([\w.]+)")
PACKAGES = ("open_agent_compiler", "pydantic_core", "pydantic", "doit", "click", "xxhash", "yaml", "sqlite3",
            "json", "importlib", "cloudpickle", "multiprocessing", "tomli_w", "tomllib")


def bucket(filename: str, name: str) -> str:
    if filename == "~":
        match = BUILTIN_OWNER.search(name)
        owner = next((g for g in match.groups() if g), "") if match else ""
        owner = owner.split(".")[0] if owner else "builtins"
        return {"posix": "os (syscalls)", "_io": "io", "_json": "json", "marshal": "importlib"}.get(owner, owner)
    if filename.startswith("<frozen importlib") or "importlib" in filename:
        return "importlib"
    path = filename.replace("\\", "/")
    if "/open_agent_compiler/" in path:
        return "oac: " + path.split("/open_agent_compiler/", 1)[1]
    for package in PACKAGES:
        if f"/{package}/" in path or path.endswith(f"/{package}.py"):
            return package
    return Path(path).stem if path.startswith("/") else path


def _label(func: tuple[str, int, str]) -> str:
    filename, line, name = func
    if filename == "~":
        return name
    path = filename.replace("\\", "/")
    for marker in ("/site-packages/", "/lib/python3", "/src/"):
        if marker in path:
            path = path.split(marker, 1)[1]
            break
    return f"{name} ({path}:{line})"


def summarize(stats: pstats.Stats) -> dict[str, Any]:
    raw: dict[Any, Any] = stats.stats  # type: ignore[attr-defined]
    total = stats.total_tt  # type: ignore[attr-defined]
    entries = [(func, cc, nc, tt, ct) for func, (cc, nc, tt, ct, _callers) in raw.items()]

    def row(entry: tuple[Any, ...]) -> dict[str, Any]:
        func, _cc, nc, tt, ct = entry
        return {"function": _label(func), "calls": nc, "own_s": round(tt, 4), "cumulative_s": round(ct, 4)}

    buckets: dict[str, float] = {}
    for func, _cc, _nc, tt, _ct in entries:
        key = bucket(func[0], func[2])
        buckets[key] = buckets.get(key, 0.0) + tt
    ours = [e for e in entries if "/open_agent_compiler/" in e[0][0].replace("\\", "/")]
    return {
        "total_s": round(total, 4),
        "top_own_time": [row(e) for e in sorted(entries, key=lambda e: e[3], reverse=True)[:TOP]],
        "top_cumulative_ours": [row(e) for e in sorted(ours, key=lambda e: e[4], reverse=True)[:TOP]],
        "buckets": [{"bucket": k, "own_s": round(v, 4), "share": round(v / total, 4) if total else 0.0}
                    for k, v in sorted(buckets.items(), key=lambda kv: kv[1], reverse=True)[:TOP]],
    }


def main(argv: list[str]) -> int:
    parsed = command_line(argv, __doc__ or "")
    if parsed is None:
        return 2
    prefix, command = parsed
    profiler = cProfile.Profile()  # imports are profiled too
    code = run_oac(command, started=profiler.enable, ended=profiler.disable)
    Path(prefix + ".prof").parent.mkdir(parents=True, exist_ok=True)
    profiler.dump_stats(prefix + ".prof")
    summary = summarize(pstats.Stats(prefix + ".prof"))
    summary["exit_code"] = code
    Path(prefix + ".json").write_text(json.dumps(summary, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
