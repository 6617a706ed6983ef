"""Pytest setup for the real-harness probes (see _harness.py)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

# Make `import _harness` work under any --import-mode.
_HERE = str(Path(__file__).resolve().parent)
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "harness: runs a real agent-harness CLI installed by .ci/install-harnesses "
        "(skipped with the reason when that harness is unavailable)",
    )
