"""Pytest setup for the real-harness probes (see _harness.py).

Locally a harness that is not installed skips its tests, with the reason. In CI (the environment variable
`CI` set to a true value) such a skip is a FAILURE with that reason: CI must never be green with zero harness
coverage because the best-effort install failed.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

# Make `import _harness` work under any --import-mode.
_HERE = str(Path(__file__).resolve().parent)
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)

FALSE_WORDS = ("", "0", "false", "no", "off")


def in_ci() -> bool:
    """True when `CI` is set to anything but an empty or false-looking value (CI services set `CI=true`)."""
    return os.environ.get("CI", "").strip().lower() not in FALSE_WORDS


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "harness: runs a real agent-harness CLI installed by .ci/install-harnesses "
        "(skipped with the reason when that harness is unavailable; a failure when CI is set)",
    )


def _skip_reason(report: pytest.TestReport) -> str:
    longrepr = report.longrepr
    if isinstance(longrepr, tuple) and len(longrepr) == 3:
        return str(longrepr[2]).removeprefix("Skipped: ")
    return str(longrepr)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    outcome = yield
    report: pytest.TestReport = outcome.get_result()
    if report.skipped and in_ci() and not hasattr(report, "wasxfail"):
        report.outcome = "failed"
        report.longrepr = f"CI is set, so a harness test may not be skipped: {_skip_reason(report)}"
