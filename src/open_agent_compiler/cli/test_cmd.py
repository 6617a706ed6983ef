"""`oac test`: run capability, tool and agent tests as a doit task graph."""

import json
import sys
from pathlib import Path
from typing import Any

import click

from open_agent_compiler.cli.errors import one_line_errors
from open_agent_compiler.errors import OacError
from open_agent_compiler.compiler.dialects import DIALECTS
from open_agent_compiler.tasks.run import run_tests
from open_agent_compiler.tasks.settings import build_options
from open_agent_compiler.testing.discovery import KINDS


def _one(values: tuple[str, ...], flag: str) -> str | None:
    """`oac test` checks one dialect per run: a repeated flag is refused, never silently reduced to its last."""
    if len(set(values)) > 1:
        raise OacError(f"{flag} given {len(values)} times ({', '.join(values)}); oac test checks one per "
                               f"run: run it once for each")
    return values[0] if values else None


def _maxfail(ctx: click.Context, param: click.Parameter, value: Any) -> None:
    """-x and --maxfail write one setting; click handles options in the order given, so the later one wins."""
    if param.name == "exitfirst" and value:
        ctx.meta["oac_maxfail"] = 1
    elif param.name == "maxfail" and value is not None:
        ctx.meta["oac_maxfail"] = value


@click.command("test")
@click.argument("factory", required=False)
@click.option("--config", "config", help="Compilation config to test (default: [tool.oac] config).")
@click.option("--dialect", multiple=True, type=click.Choice(sorted(DIALECTS)),
              help="Dialect whose compiled artifact capability tests inspect (default opencode; one per run).")
@click.option("--results", type=click.Path(path_type=Path), help="JSONL results file (default .oac/test_results.jsonl).")
@click.option("--force", is_flag=True, default=None, help="Run every test, ignoring green state.")
@click.option("--filter", "filter_", multiple=True,
              help="Only tests whose name or id contains this text (repeat: any of them).")
@click.option("--kind", multiple=True, type=click.Choice(KINDS), help="Only tests of this kind (repeat: any of them).")
@click.option("--variant", help="Variant label, part of every test's key and record.")
# -n/--timeout are checked by TestOptions, the same validation [tool.oac] values get
@click.option("-n", "--jobs", type=int, help="Run tests in N processes (N >= 1).")
@click.option("--timeout", type=float, help="Seconds a real handler may run (finite, > 0; default 60).")
@click.option("--hermetic", is_flag=True, default=None, help="Fail any test that would run a real handler (also OAC_HERMETIC=1).")
@click.option("--strict", is_flag=True, default=None,
              help="Also fail tests that are not runnable or checked nothing (every evaluator skipped).")
@click.option("--junit", type=click.Path(path_type=Path), help="Also write JUnit XML here.")
@click.option("--explain", is_flag=True, default=None, help="Say why each test runs or is skipped.")
@click.option("-v", "--verbose", is_flag=True, default=None, help="Print a line for every test.")
@click.option("--invoker", help="Run agent tests with this invoker: scripted, opencode, claude, codex, pi or module:factory.")
@click.option("--record", "record", is_flag=False, flag_value="once", default=None,
              type=click.Choice(["none", "once", "new_episodes", "all"]),
              help="Agent tests' cassettes: record model exchanges through the loopback proxy (once, the default; "
              "new_episodes; all) or replay only (none, as without --record).")
@click.option("--invoker-script", "invoker_script",
              help="The model scripts of agent tests, module:attribute (default: <factory module>_scripts:SCRIPTS).")
@click.option("--judge", help="LLM judge for llm_judge evaluators: module:factory (or 'http', see [tool.oac.judge]).")
@click.option("--require-shared-state", "require_shared_state", is_flag=True, default=None,
              help="Exit 2 when the shared state ([tool.oac] state, OAC_STATE_URL) is unreachable or fails.")
# selection and output like pytest (docs/testing.md "Selecting tests"); repeated -k/-m: the last one counts
@click.option("-k", "keyword", metavar="EXPR", help="Only tests whose id matches EXPR: names (substrings, any case) "
              "with and/or/not and parentheses.")
@click.option("-m", "markers", metavar="EXPR", help="Only tests whose tags match EXPR (and/or/not, parentheses).")
@click.option("--lf", "--last-failed", "last_failed", is_flag=True, default=None,
              help="Only the tests whose last recorded run failed (all when none did).")
@click.option("-x", "--exitfirst", is_flag=True, default=None, callback=_maxfail, expose_value=False,
              help="Stop after the first failure (--maxfail 1).")
@click.option("--maxfail", type=int, metavar="N", callback=_maxfail, expose_value=False,
              help="Stop after N failures (the later of -x/--maxfail counts, as in pytest).")
@click.option("--durations", type=int, metavar="N", help="List the N slowest tests (0: all) before the summary.")
@click.option("--shard", metavar="K/N", help="Run only shard K of N (a stable partition by the hash of the test id).")
@click.option("--shard-by", type=click.Choice(["hash", "duration"]),
              help="duration: balance agent tests over the shards by their recorded durations.")
@click.option("--pipeline", metavar="ID", help="The CI pipeline this run is part of (default: GitHub's run id and "
              "attempt, GitLab's pipeline id); `oac results`/`oac report` total a pipeline across its shards.")
@click.option("--repeat", type=int, metavar="N", help="Run each selected test N times (no green skip); flaky "
              "tests are reported with pass@k / pass^k.")
@click.option("--flaky-as", type=click.Choice(["pass", "fail"]), help="What a flaky test counts as (default fail).")
@click.option("--list", "--collect-only", "list_", is_flag=True, help="List the selected tests (id, kind, "
              "target, tags, green) without running any.")
@click.option("--format", "format_", type=click.Choice(["text", "json"]), default="text",
              help="--list output: a line per test, or JSON.")
@click.option("--watch", is_flag=True, help="Run, then run again on every save the tests whose key changed "
              "(keys: a all, f failed, q quit; see docs/testing.md \"Watch mode\").")
@one_line_errors
def test_command(factory: str | None, config: str | None, dialect: tuple[str, ...], results: Path | None,
                 force: bool | None, filter_: tuple[str, ...], kind: tuple[str, ...], variant: str | None,
                 jobs: int | None, timeout: float | None, hermetic: bool | None, strict: bool | None,
                 junit: Path | None, explain: bool | None, verbose: bool | None, invoker: str | None = None,
                 judge: str | None = None, invoker_script: str | None = None,
                 require_shared_state: bool | None = None, keyword: str | None = None,
                 markers: str | None = None, last_failed: bool | None = None, durations: int | None = None,
                 shard: str | None = None, shard_by: str | None = None, repeat: int | None = None,
                 flaky_as: str | None = None, list_: bool = False, format_: str = "text",
                 record: str | None = None, watch: bool = False, pipeline: str | None = None) -> None:
    """Run the tests of FACTORY (module:callable returning an AgentRegistry) for one config."""
    options = build_options(Path.cwd(), {
        "factory": factory, "config": config, "dialect": _one(dialect, "--dialect"), "results": results,
        "force": force, "filter": filter_, "kind": kind, "variant": variant, "jobs": jobs, "timeout": timeout,
        "hermetic": hermetic, "strict": strict, "junit": junit, "explain": explain, "verbose": verbose,
        "invoker": invoker, "judge": judge, "invoker_script": invoker_script, "record": record,
        "require_shared_state": require_shared_state, "keyword": keyword, "markers": markers,
        "last_failed": last_failed, "maxfail": click.get_current_context().meta.get("oac_maxfail"),
        "durations": durations, "shard": shard, "shard_by": shard_by, "repeat": repeat, "flaky_as": flaky_as,
        "pipeline": pipeline,
    })
    if watch:
        if list_:
            raise OacError("--watch runs tests; --list only lists them: give one of them")
        from open_agent_compiler.cli.watch import cycle_args, watch as watch_tests

        sys.exit(watch_tests(options, cycle_args(sys.argv[1:])))
    if list_:
        from open_agent_compiler.tasks.listing import list_line, list_tests

        listed = list_tests(options, process_ends=True)
        if format_ == "json":
            print(json.dumps(listed, indent=1))
        else:
            for entry in listed:
                print(list_line(entry))
            print(f"oac test: {len(listed)} selected, {sum(e['green'] for e in listed)} green")
        sys.exit(0)
    resident = getattr(click.get_current_context().obj, "run", None)  # a watch cycle keeps its plan (cli.watch)
    sys.exit(resident(options) if resident else run_tests(options, process_ends=True))  # `main` ends the process
