"""One home for the harness CLIs: `.ci/install-harnesses` installs into it, the invoker and both test packages
read it, `HARNESS_DIR` overrides it everywhere."""

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from open_agent_compiler.errors import OacError
from open_agent_compiler.testing.invokers.harness.base import find_binary, harness_dir

REPO = Path(__file__).resolve().parents[2]


def fake_install(root: Path) -> Path:
    binary = root / "opencode" / "bin" / "opencode"
    binary.parent.mkdir(parents=True)
    binary.write_text("#!/bin/sh\necho 1.18.33\n")
    binary.chmod(0o755)
    (root / "status.json").write_text(json.dumps({"harnesses": {"opencode": {
        "available": True, "bin": str(binary), "version": "1.18.33"}}}))
    return binary


def test_the_invoker_finds_an_install_in_the_default_home_without_any_variable(tmp_path: Path,
                                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("HARNESS_DIR", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("PATH", "/nonexistent")
    assert harness_dir() == tmp_path / ".cache" / "oac" / "harnesses"
    binary = fake_install(harness_dir())
    assert find_binary("opencode", "opencode").argv == (str(binary),)
    elsewhere = tmp_path / "elsewhere"
    monkeypatch.setenv("HARNESS_DIR", str(elsewhere))
    with pytest.raises(OacError, match=f"not available in {elsewhere}/status.json, not on PATH"):
        find_binary("opencode", "opencode")
    installed = fake_install(elsewhere)
    assert find_binary("opencode", "opencode").argv == (str(installed),)  # HARNESS_DIR wins


def test_installer_ci_and_test_packages_agree_on_the_home() -> None:
    installer = (REPO / ".ci/install-harnesses").read_text()
    assert re.search(r'^H="\$\{HARNESS_DIR:-\$HOME/\.cache/oac/harnesses\}"$', installer, re.M)
    ci = (REPO / ".ci/run").read_text()
    # CI installs into a folder it empties first and exports it, so the installer and the suite read one place
    assert re.search(r'^rm -rf "\$CACHE" && mkdir -p "\$CACHE"', ci, re.M)
    assert re.search(r'^export HARNESS_DIR="\$CACHE/harnesses" ', ci, re.M)
    assert ci.index("export HARNESS_DIR") < ci.index("bash .ci/install-harnesses") < ci.index("pytest -q")
    probe = ("import sys; sys.path[:0] = ['tests/harness', 'tests/agents']; import _harness, test_harness_runs; "
             "from open_agent_compiler.testing.invokers.harness.base import harness_dir; "
             "print(_harness.HARNESS_DIR == test_harness_runs.HARNESS_DIR == harness_dir())")
    for env in ({}, {"HARNESS_DIR": "/x/y"}):
        done = subprocess.run([sys.executable, "-c", probe], cwd=REPO, capture_output=True, text=True, timeout=120,
                              env={"PATH": "/usr/bin:/bin", "HOME": "/tmp", **env})
        assert done.stdout.strip() == "True", done.stderr


def test_two_projects_with_one_script_module_name_in_one_process(tmp_path: Path) -> None:
    from open_agent_compiler.testing.invokers.loading import load_attribute

    for name in ("one", "two"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "agents_scripts.py").write_text(f"SCRIPTS = {{{name!r}: 1}}\n")
    assert load_attribute("agents_scripts:SCRIPTS", tmp_path / "one", "s")[0] == {"one": 1}
    assert load_attribute("agents_scripts:SCRIPTS", tmp_path / "two", "s")[0] == {"two": 1}


def test_pi_without_its_subagents_extension_names_the_status_file_and_the_binary(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from open_agent_compiler.testing.invokers.harness.base import HarnessBinary
    from open_agent_compiler.testing.invokers.harness.pi import PiSession
    from open_agent_compiler.testing.invokers.protocol import InvokerError

    monkeypatch.setenv("HARNESS_DIR", str(tmp_path))
    bare = HarnessBinary(name="pi", argv=("/usr/local/bin/pi",))
    with pytest.raises(InvokerError) as raised:
        PiSession(bare, None, None, None, None, [])  # type: ignore[arg-type]  # refused before any of them is used
    message = str(raised.value)
    assert f"{tmp_path}/status.json" in message and "/usr/local/bin/pi" in message
    assert ".ci/install-harnesses" in message and "\n" not in message
