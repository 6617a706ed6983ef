"""Every module path that moved out of testing/ (testing.moved.MOVED) still imports, in a fresh interpreter, as
the very module it moved to; no file is left behind under the old name."""

import json
import subprocess
import sys
from pathlib import Path

from open_agent_compiler.testing.moved import MOVED

PACKAGE = Path(__file__).resolve().parents[2] / "src"


def test_each_old_path_is_its_new_module() -> None:
    probe = ("import importlib, json, sys; from open_agent_compiler.testing.moved import MOVED; "
             "print(json.dumps({old: importlib.import_module(old) is importlib.import_module(new) "
             "for old, new in MOVED.items()}))")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {old: True for old in MOVED}


def test_no_file_under_an_old_name() -> None:
    for old, new in MOVED.items():
        assert not (PACKAGE / (old.replace(".", "/") + ".py")).exists(), old
        assert (PACKAGE / (new.replace(".", "/") + ".py")).is_file(), new


def test_an_unknown_name_is_still_an_import_error() -> None:
    done = subprocess.run([sys.executable, "-c", "import open_agent_compiler.testing.no_such_module"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 1 and "ModuleNotFoundError" in done.stderr
