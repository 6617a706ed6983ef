"""The only layer that knows doit: the task graph, its reporter and its backend.

A project's dodo.py gets the same graph as `oac test` with::

    from open_agent_compiler.tasks import DOIT_CONFIG, task_compile, task_test  # noqa: F401
"""

from open_agent_compiler.tasks.compile_tasks import task_compile
from open_agent_compiler.tasks.dodo_api import DOIT_CONFIG, task_test
from open_agent_compiler.tasks.run import run_tests
from open_agent_compiler.tasks.settings import TestOptions, build_options

__all__ = ["DOIT_CONFIG", "TestOptions", "build_options", "run_tests", "task_compile", "task_test"]
