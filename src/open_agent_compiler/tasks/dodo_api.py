"""What a project's dodo.py imports so that `doit test` runs the very graph `oac test` runs."""

import gc
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from doit.exceptions import TaskFailed

from open_agent_compiler.errors import NothingSelected, OacError
from open_agent_compiler.tasks.file_checker import OacFileChecker
from open_agent_compiler.tasks.gc_tuning import RUN_THRESHOLDS
from open_agent_compiler.tasks.graph import TestPlan
from open_agent_compiler.testing import zygote
from open_agent_compiler.tasks.reporter import OacReporter
from open_agent_compiler.tasks.settings import STATE_DB, STATE_DIR, build_options


DOIT_CONFIG: dict[str, Any] = {
    "dep_file": f"{STATE_DIR}/{STATE_DB}",
    "backend": "oac",
    "continue": True,
    "verbosity": 0,
    "reporter": OacReporter,
    "check_file_uptodate": OacFileChecker,
}


def task_test() -> Iterator[dict[str, Any]]:
    """oac tests of the config named in [tool.oac] (pyproject.toml); doit skips the green ones."""
    gc.set_threshold(*RUN_THRESHOLDS)  # the whole doit process is one run: see gc_tuning
    zygote.start()
    try:
        plan = TestPlan(build_options(Path.cwd(), {}))
    except NothingSelected as exc:  # `doit test` fails saying so; the dodo's other tasks (`doit compile`) still load
        yield {"basename": "test", "doc": "oac tests (none selected)", "verbosity": 0,
               "actions": [(_nothing_to_test, [str(exc)])]}
        return
    except OacError as exc:
        print(f"oac: {exc}", file=sys.stderr)
        raise SystemExit(2) from None
    yield from plan.task_dicts()


def _nothing_to_test(message: str) -> TaskFailed:
    return TaskFailed(message)
