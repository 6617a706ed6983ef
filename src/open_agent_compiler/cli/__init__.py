"""The `oac` command."""

import os
import sys

import click

from open_agent_compiler import __version__
from open_agent_compiler.cli.compile_cmd import compile_command
from open_agent_compiler.cli.info_cmd import info_command
from open_agent_compiler.cli.init_cmd import init_command
from open_agent_compiler.cli.streams import guard_standard_streams, stream_failure
from open_agent_compiler.cli.test_cmd import test_command


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="oac")
def oac() -> None:
    """Define agents once; compile them for OpenCode, Claude Code, Pi and Codex; test them mocks-first."""


oac.add_command(compile_command, "compile")
oac.add_command(info_command, "info")
oac.add_command(init_command, "init")
oac.add_command(test_command, "test")


def main() -> None:
    """Console entry point. Everything is written and closed when a command returns, so the process ends
    without tearing down its object graph (that teardown alone took ~0.4 s after a 5,000-test run)."""
    guard_standard_streams()
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
    os._exit(code)
