"""The `oac` command."""

import gc
import importlib
import os
import sys

import click

from open_agent_compiler import __version__
from open_agent_compiler.cli.streams import guard_standard_streams, stream_failure

# A command's module is imported only when that command runs: `oac test` never imports the compile writer, and
# `oac compile` not the test engine (measured with -X importtime, issue 18).
COMMANDS = {"cassettes": ("open_agent_compiler.cli.cassettes_cmd", "cassettes_command"),
            "compile": ("open_agent_compiler.cli.compile_cmd", "compile_command"),
            "coverage": ("open_agent_compiler.cli.coverage_cmd", "coverage_command"),
            "info": ("open_agent_compiler.cli.info_cmd", "info_command"),
            "init": ("open_agent_compiler.cli.init_cmd", "init_command"),
            "report": ("open_agent_compiler.cli.report_cmd", "report_command"),
            "results": ("open_agent_compiler.cli.results_cmd", "results"),
            "show": ("open_agent_compiler.cli.show_cmd", "show_command"),
            "state": ("open_agent_compiler.cli.state_cmd", "state_group"),
            "test": ("open_agent_compiler.cli.test_cmd", "test_command")}


class LazyGroup(click.Group):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in COMMANDS:
            return None
        module, attr = COMMANDS[cmd_name]
        command: click.Command = getattr(importlib.import_module(module), attr)
        if _collect_after_import[0]:  # the console entry point: see `main`
            _collect_after_import[0] = False
            gc.freeze()
            gc.enable()
        return command


# True while `main` holds the garbage collector off until the command's module is imported.
_collect_after_import = [False]


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="oac")
def oac() -> None:
    """Define agents once; compile them for OpenCode, Claude Code, Pi and Codex; test them mocks-first."""


def main() -> None:
    """Console entry point. Everything is written and closed when a command returns, so the process ends
    without tearing down its object graph (that teardown alone took ~0.4 s after a 5,000-test run).

    Importing a command's module builds long-lived objects only (modules, classes, pydantic schemas): the garbage
    collector is off until it is imported, and what exists then is frozen (never traversed again) before it is
    turned back on (~40 ms of collection passes in a warm `oac test`, measured with gc.callbacks)."""
    if gc.isenabled():
        gc.disable()
        _collect_after_import[0] = True
    guard_standard_streams()
    if sys.argv[1:2] == ["test"]:  # the engine runs watched from outside; forked while this process is small
        from open_agent_compiler.execution.watchdog import supervise

        supervise()
    try:
        returned = oac.main(prog_name="oac", standalone_mode=False)
        code = returned if isinstance(returned, int) else 0
    except click.ClickException as error:
        error.show()
        code = error.exit_code
    except (KeyboardInterrupt, click.exceptions.Abort) as interrupt:
        print("oac: interrupted", file=sys.stderr)
        cause = interrupt.__cause__ or interrupt  # click turns KeyboardInterrupt into Abort
        code = 128 + getattr(cause, "signum", 2)  # SIGTERM/SIGHUP before a run started: 143/129
    except SystemExit as exit_:
        code = exit_.code if isinstance(exit_.code, int) else (0 if exit_.code is None else 1)
        if exit_.code is not None and not isinstance(exit_.code, int):
            print(exit_.code, file=sys.stderr)
    sys.stdout.flush()
    failure = stream_failure()
    if failure is not None:  # output was lost (not a reader that left: that ends quietly)
        print(f"oac: {failure}", file=sys.stderr)
        code = code or 2
    sys.stderr.flush()
    if (watched := sys.modules.get("open_agent_compiler.execution.watchdog")) is not None:
        watched.ended()  # this exit is ours, not user code's
    os._exit(code)
