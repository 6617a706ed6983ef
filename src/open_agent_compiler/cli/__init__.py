"""The `oac` command."""

import click

from open_agent_compiler import __version__
from open_agent_compiler.cli.compile_cmd import compile_command
from open_agent_compiler.cli.info_cmd import info_command
from open_agent_compiler.cli.test_cmd import test_command


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="oac")
def main() -> None:
    """Define agents once; compile them for OpenCode, Claude Code, Pi and Codex; test them mocks-first."""


main.add_command(compile_command, "compile")
main.add_command(info_command, "info")
main.add_command(test_command, "test")
