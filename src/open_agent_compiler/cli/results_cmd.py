"""`oac results`: a terminal summary of the JSONL test history (the group's default), and `oac results merge`,
which combines the results of several runs (the shards of a CI matrix)."""

import json
import os
import sys
from pathlib import Path
from typing import Any

import click

from open_agent_compiler.cli.errors import one_line_errors
from open_agent_compiler.errors import OacError
from open_agent_compiler.tasks.gc_tuning import fewer_collections
from open_agent_compiler.history.views import History, _moment, first_failure, load_history, parse_since, summary
from open_agent_compiler.history.index import index_place, load_indexed

# Imported where used, not here: the project lookup (tasks.project), the merge and the record models
# (history.log: pydantic). `oac results --results FILE` imports none of them (measured with
# -X importtime: ~0.2 s of CPU of a 50,000-line summary, issue 20).


def results_path(given: Path | None) -> Path:
    """--results (relative to the current directory), else `[tool.oac] results` (relative to the project root),
    else `.oac/test_results.jsonl` of the project."""
    return _results_and_state(given)[0]


def _results_and_state(given: Path | None) -> tuple[Path, Path | None]:
    """The results path, and the project's `.oac` when the project was looked up for it (else None)."""
    if given is not None:
        return given, None
    from open_agent_compiler.tasks.project import STATE_DIR, find_project

    project = find_project(Path.cwd())
    configured = project.values.get("results")
    if configured is not None and not isinstance(configured, str):
        raise OacError(f"{project.where('results')} must be a string, not {type(configured).__name__}")
    return project.root / (configured or Path(STATE_DIR) / "test_results.jsonl"), project.root / STATE_DIR


def read_history(results: Path | None, since: str | None) -> History:
    """The history, read with the collector's thresholds of a test run: a long history allocates hundreds of
    thousands of small acyclic objects (the process ends right after, so the defaults are not restored).
    Through the history index (`history.index`) where there is one: a repeat view reads only the lines
    appended since the last one; --since skips the part of the log older than it."""
    path, state_dir = _results_and_state(results)
    moment = parse_since(since) if since else None
    place = index_place(path, state_dir)
    warn = lambda message: click.echo(message, err=True)  # noqa: E731
    with fewer_collections(restore=False):
        if place is None:
            history = load_history(path, moment, warn=warn)
        else:
            history = load_indexed(path, place, warn=warn, since=moment)
    _KEPT.append(history)
    return history


# The histories read, kept to the end of the process: `main` ends it without tearing its objects down, and freeing
# a 50,000-record history when the command returns costs ~0.04 s
_KEPT: list[History] = []


def _seconds(value: float) -> str:
    if value >= 3600:
        return f"{value / 3600:.1f} h"
    if value >= 60:
        return f"{value / 60:.1f} min"
    return f"{value:.2f} s"


def _one_line(text: Any, width: int = 160) -> str:
    flat = " ".join(str(text).split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def _where(record: dict[str, Any]) -> str:
    """` (file:line)` where the record says its test is defined, else ""."""
    file, line = record.get("file"), record.get("line")
    return f" ({file}:{line})" if isinstance(file, str) and isinstance(line, int) else ""


def text_lines(history: History, top: int, since: str | None = None) -> list[str]:
    from open_agent_compiler.history.pipelines import last_pipeline, pipelines

    last = history.last_run
    lines = [f"oac results: {history.path}: {history.records} records, {len(history.runs)} runs"
             + (f", {len(pipelines(history))} pipelines" if last is not None else "")]
    if last is None:
        return lines + [f"no test records since {since}" if since else "no test records"]
    failing = history.failing()  # first: what a failing pipeline's reader looks for
    lines.append(f"failing ({len(failing)}):" if failing else "failing: none")
    for test in failing:
        lines.append(f"  - {test.test_id}{_where(test.last)} [{test.last.get('timestamp', '')}]: "
                     f"{_one_line(first_failure(test.last.get('evidence')) or test.last.get('skip_reason') or '')}")
    pipeline = last_pipeline(history)
    assert pipeline is not None
    counts = " ".join(f"{status}={count}" for status, count in pipeline.counts.items())
    about = [f"{len(pipeline.runs)} run" + ("s" if len(pipeline.runs) > 1 else "")]
    if pipeline.shards:
        about.append("shards " + ",".join(pipeline.shards))
    if pipeline.commits:
        about.append("commit " + ",".join(commit[:12] for commit in pipeline.commits))
    lines.append(f"last pipeline {pipeline.pipeline_id} ({'; '.join(about)}; finished {pipeline.finished}): "
                 f"{counts}; failed here={len(pipeline.failing)}; skipped green={pipeline.skipped_green} "
                 f"(saved {_seconds(pipeline.saved_s)})")
    counts = " ".join(f"{status}={count}" for status, count in last.counts.items())
    lines.append(f"last run {last.run_id} ({last.finished}): {counts}")
    flaky = history.flaky()
    lines.append(f"flaky, passed and failed under one key ({len(flaky)}):" if flaky else "flaky: none")
    for test in flaky:
        statuses = "".join({"pass": ".", "fail": "F"}.get(status, "s") for _, status, _ in test.points[-20:])
        lines.append(f"  - {test.test_id}: {statuses}")
    slowest = history.slowest(top)
    if slowest:
        lines.append(f"slowest ({len(slowest)}):")
        lines += [f"  {_seconds(test.duration_s):>9}  {test.test_id}" for test in slowest]
    lines.append(f"time saved by skipping green tests: {_seconds(history.saved_s)} over {len(history.runs)} runs")
    return lines


@click.group("results", invoke_without_command=True)
@click.option("--results", "results", type=click.Path(path_type=Path, dir_okay=False),
              help="JSONL results file (default: [tool.oac] results, else .oac/test_results.jsonl).")
@click.option("--since", help="Only records from then on: 7d, 12h, 30m, or an ISO date/datetime.")
@click.option("--format", "format_", type=click.Choice(["text", "json"]), default="text", show_default=True,
              help="text for people, json for scripts.")
@click.option("--top", type=click.IntRange(min=1), default=10, show_default=True, help="How many slowest tests.")
@click.pass_context
@one_line_errors
def results(ctx: click.Context, results: Path | None, since: str | None, format_: str, top: int) -> None:
    """Summarise the test history: the last run, failing, flaky and slowest tests, time saved by skipping.

    A corrupt line (left by a crashed writer) is skipped with a warning naming file:line.
    """
    if ctx.invoked_subcommand is not None:
        return
    history = read_history(results, since)
    if format_ == "json":
        from open_agent_compiler.history.pipelines import last_pipeline

        document = summary(history, top)
        pipeline = last_pipeline(history)
        document["last_pipeline"] = pipeline.as_dict() if pipeline else None
        click.echo(json.dumps(document, indent=2, ensure_ascii=False))
    else:
        click.echo("\n".join(text_lines(history, top, since)))


@results.command("merge")
@click.argument("files", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("-o", "--output", type=click.Path(path_type=Path), help="Write the merged records here (JSONL).")
@click.option("--junit", type=click.Path(path_type=Path, dir_okay=False),
              help="Write the merged result as JUnit XML (one test case per test, with its file and line).")
@click.option("--since", help="Keep only records from then on (7d, 12h, 30m, or an ISO date): bounds a history "
              "carried from pipeline to pipeline.")
@one_line_errors
def merge_command(files: tuple[Path, ...], output: Path | None, junit: Path | None, since: str | None) -> None:
    """Merge FILES (e.g. one per shard) and print the combined summary. Exit 1 when a test failed or the same
    key both passed and failed (a conflict), else 0. Under GitHub Actions (GITHUB_ACTIONS=true) each failure is
    also printed as an annotation on the line that defines the test."""
    from open_agent_compiler import fsio
    from open_agent_compiler.history.merge import merge
    from open_agent_compiler.history.log import read_records

    for path in files:
        if not path.is_file():
            raise OacError(f"results file {path} does not exist")
    moment = parse_since(since) if since else None
    merged = merge([record for record in read_records(path) if recent(record, moment)] for path in files)
    if output is not None:
        data = "".join(json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n"
                       for record in merged.records).encode("utf-8", "backslashreplace")
        absolute = Path(os.path.abspath(output))
        fsio.write_file(fsio.trusted_root(absolute), str(absolute), data, show=str(output))
    for conflict in merged.conflicts:
        print(f"oac: conflict: {conflict.test_id} (config {conflict.config}) passed and failed under the same key "
              f"{conflict.key}", file=sys.stderr)
    from open_agent_compiler.tasks.annotations import annotate
    from open_agent_compiler.tasks.merged_view import MergedTally

    tally = MergedTally(merged)
    if junit is not None:
        from open_agent_compiler.tasks.junit import write_junit

        write_junit(Path(os.path.abspath(junit)), tally)
    print(merged.summary())
    annotate(tally, sys.stdout)
    if merged.failures:
        print("Failures:")
        for test_id, message in merged.failures:
            print(f"  - {test_id}: {' '.join(message.split())}")
    sys.exit(1 if merged.failures or merged.conflicts else 0)


def recent(record: dict[str, Any], moment: Any) -> bool:
    """Whether `record` is from `moment` on (always, without one). A record whose time cannot be read is kept:
    pruning never drops what it cannot date."""
    if moment is None:
        return True
    stamp = _moment(record.get("timestamp"))
    return stamp is None or stamp >= moment


@results.command("prune")
@click.option("--results", "results", type=click.Path(path_type=Path, dir_okay=False),
              help="JSONL results file (default: [tool.oac] results, else .oac/test_results.jsonl).")
@click.option("--older-than", "older_than", required=True, metavar="AGE",
              help="Drop records older than this: 30d, 12h, 30m (a bare number is days), or an ISO date.")
@one_line_errors
def prune_command(results: Path | None, older_than: str) -> None:
    """Drop the records older than AGE from the results file, in place (atomically): the history of a long-lived
    CI cache stays bounded. Lines that are not records (a crashed writer's) and records without a readable time
    are kept as they are."""
    from open_agent_compiler import fsio

    path = results_path(results)
    if not path.is_file():
        raise OacError(f"no results file at {path}")
    moment = parse_since(f"{older_than.strip()}d" if older_than.strip().isdigit() else older_than)
    kept: list[bytes] = []
    dropped = 0
    for raw in path.read_bytes().splitlines(keepends=True):
        try:
            record = json.loads(raw)
        except ValueError:
            kept.append(raw)
            continue
        if isinstance(record, dict) and not recent(record, moment):
            dropped += 1
        else:
            kept.append(raw)
    if dropped:
        absolute = Path(os.path.abspath(path))
        fsio.write_file(fsio.trusted_root(absolute), str(absolute), b"".join(kept), show=str(path))
    click.echo(f"oac results prune: {path}: dropped {dropped} records older than {moment.isoformat()}, "
               f"kept {len(kept)} lines")
