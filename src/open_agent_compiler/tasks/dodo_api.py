"""What a project's dodo.py imports so that `doit test` runs the very graph `oac test` runs."""

import gc
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from open_agent_compiler.errors import OacError
from open_agent_compiler.tasks.gc_tuning import RUN_THRESHOLDS
from open_agent_compiler.tasks.graph import TestPlan
from open_agent_compiler.testing import zygote
from open_agent_compiler.tasks.junit import write_junit
from open_agent_compiler.tasks.reporter import OacReporter
from open_agent_compiler.tasks.settings import STATE_DB, STATE_DIR, build_options


class DoitTestReporter(OacReporter):
    """`doit test`'s reporter: also writes the JUnit file of `[tool.oac] junit`, as `oac test --junit` does."""

    def complete_run(self) -> None:
        plans = list(self._plans)
        super().complete_run()
        for plan in plans:
            if plan.options.junit_path is not None:
                write_junit(plan.options.junit_path, self.tally)


DOIT_CONFIG: dict[str, Any] = {
    "dep_file": f"{STATE_DIR}/{STATE_DB}",
    "backend": "oac",
    "continue": True,
    "verbosity": 0,
    "reporter": DoitTestReporter,
}


def task_test() -> Iterator[dict[str, Any]]:
    """oac tests of the config named in [tool.oac] (pyproject.toml); green tests are skipped."""
    gc.set_threshold(*RUN_THRESHOLDS)  # the whole doit process is one run: see gc_tuning
    zygote.start()
    try:
        # doit's own --always-execute must also bypass the green state the plan reads before doit runs
        forced = any(arg in ("-a", "--always-execute") for arg in sys.argv[1:])
        plan = TestPlan(build_options(Path.cwd(), {"force": True if forced else None}))
    except OacError as exc:
        print(f"oac: {exc}", file=sys.stderr)
        raise SystemExit(2) from None
    yield from plan.task_dicts()
