"""pytest plugin entry point (`pytest11`) of open_agent_compiler: `pytest --oac FACTORY --oac-config NAME`.

This module is all pytest imports in a session without `--oac`: it adds the options and nothing else (no
open_agent_compiler import), so the plugin costs a project's own pytest run nothing. With `--oac`, the plugin
proper (`open_agent_compiler.cli.pytest_plugin`) is loaded and registered, after the watchdog is forked.
"""

import sys
from typing import Any

import pytest


def pytest_addoption(parser: Any) -> None:
    group = parser.getgroup("oac", "open_agent_compiler embedded tests")
    group.addoption("--oac", action="store", nargs="?", const="", default=None, metavar="FACTORY",
                    help="collect the embedded oac tests of FACTORY (module:callable; bare --oac: factory from "
                         "[tool.oac] of pyproject.toml) as pytest items")
    group.addoption("--oac-config", action="store", default=None, metavar="NAME",
                    help="compilation config whose tests to collect (default: [tool.oac] config)")
    group.addoption("--oac-dialect", action="store", default=None, metavar="DIALECT",
                    help="dialect capability tests inspect (default: [tool.oac] dialect, else opencode)")


@pytest.hookimpl(hookwrapper=True, tryfirst=True)
def pytest_load_initial_conftests(early_config: Any, parser: Any, args: Any) -> Any:
    """With `--oac`, the session runs user code watched from outside, as `oac test` does: the watchdog is forked
    here, before pytest captures output or imports the project (`execution.watchdog`). Not in an xdist worker
    (its controller reports a worker that died) nor in a session run inside another program (pytester, an IDE)."""
    if getattr(early_config.known_args_namespace, "oac", None) is not None \
            and not hasattr(early_config, "workerinput") \
            and tuple(early_config.invocation_params.args) == tuple(sys.argv[1:]):
        from open_agent_compiler.execution import watchdog

        if watchdog.console_of("pytest", "py.test"):
            watchdog.supervise()
    yield


def pytest_configure(config: Any) -> None:
    if config.getoption("oac", None) is None:
        return
    from open_agent_compiler.cli.pytest_plugin import OacPlugin

    config.pluginmanager.register(OacPlugin(config), "oac-tests")
