"""`oac show TEST_ID`: the last record of one test in the results history, and the key parts of its last pass."""

import json
import sys
from pathlib import Path
from typing import Any

import click

from open_agent_compiler.cli.errors import one_line_errors
from open_agent_compiler.errors import OacError
from open_agent_compiler.tasks.backend import saved_parts
from open_agent_compiler.tasks.graph import TEST_GROUP, task_name
from open_agent_compiler.tasks.settings import STATE_DB, STATE_DIR, find_project
from open_agent_compiler.testing.discovery import closest
from open_agent_compiler.history.scan import read_log, scan

_FIELDS = ("status", "test_kind", "target_name", "config", "dialect", "variant", "mock_profile", "model", "invoker",
           "score", "duration_s", "timestamp", "run_id", "skip_reason", "repeat", "repeats", "flaky", "pipeline", "shard",
           "commit")
_KEYS = ("composite_hash", "agent_state_hash", "mock_set_hash")


def _quiet(message: str) -> None:
    """The second pass (names for the suggestion) already warned in the first."""


def _last_record(path: Path, test_id: str, config: str | None) -> dict[str, Any] | None:
    """The last record of `test_id` (of `config`, not one of a `--repeat` series): the log is scanned as `oac results`
    scans it, and only that test's lines are decoded. A corrupt line is skipped with the warning naming file:line."""
    data = read_log(path)
    wanted = test_id.encode("utf-8", "surrogatepass")
    last: dict[str, Any] | None = None
    for _, _, found, _, _, _, start, end in scan(data, path):
        if found != wanted:
            continue
        try:
            record = json.loads(data[start:end])
        except ValueError:  # torn inside its evidence yet ending in "}": the scanner's fields only, not a record
            line = data.count(b"\n", 0, start) + 1
            print(f"oac: warning: {path}:{line}: skipping a corrupt line", file=sys.stderr)
            continue
        if (config is None or record.get("config") == config) and not record.get("repeat"):
            last = record
    return last


@click.command("show")
@click.argument("test_id")
@click.option("--results", type=click.Path(path_type=Path), help="JSONL results file (default: [tool.oac] results, "
              "else .oac/test_results.jsonl).")
@click.option("--config", help="Only records of this config (default: any).")
@click.option("--format", "format_", type=click.Choice(["text", "json"]), default="text")
@one_line_errors
def show_command(test_id: str, results: Path | None, config: str | None, format_: str) -> None:
    """Print the last record of TEST_ID: status, evidence, key parts, invoker, timings."""
    project = find_project(Path.cwd())
    path = results or Path(project.values.get("results") or Path(STATE_DIR) / "test_results.jsonl")
    path = path if path.is_absolute() else (Path.cwd() if results else project.root) / path
    last = _last_record(path, test_id, config)
    if last is None:
        seen = {found.decode("utf-8", "surrogatepass") for _, _, found, *_ in scan(read_log(path), path, _quiet)}
        raise OacError(f"no record of test {test_id!r} in {path}{closest(test_id, seen)}")
    parts = saved_parts(project.root / STATE_DIR / STATE_DB,
                        f"{TEST_GROUP}:{task_name(str(last.get('config')), test_id)}")
    if format_ == "json":
        print(json.dumps({"record": last, "green_key_parts": parts}, indent=1, ensure_ascii=False))
        sys.exit(0)
    print(test_id)
    if isinstance(last.get("file"), str) and isinstance(last.get("line"), int):
        print(f"  defined at: {last['file']}:{last['line']}")
    for field in _FIELDS:
        if last.get(field) is not None:
            print(f"  {field}: {last[field]}")
    for field in _KEYS:
        print(f"  {field}: {last.get(field)}")
    if parts:
        print("  key parts of its last pass:")
        for name, value in parts.items():
            print(f"    {name}: {value if not isinstance(value, dict) else json.dumps(value, sort_keys=True)}")
    print("  evidence:")
    for result in last.get("evidence") or ():
        mark = "skip" if result.get("skipped") else "pass" if result.get("passed") else "FAIL"
        print(f"    {mark} {result.get('name')}: {' '.join(str(result.get('evidence') or '').split())}")
    sys.exit(0)
