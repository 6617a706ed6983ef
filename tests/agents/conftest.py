"""Fixtures for agent tests (helpers live in agent_project.py)."""

import sys
from pathlib import Path

_HERE = str(Path(__file__).resolve().parent)
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)

from agent_project import example  # noqa: E402,F401
