"""Import paths a 1.16.5 user's code uses: the tool runtime, the compile module, WorkflowStepDefinition from
agent_model, and `open_agent_compiler.__main__`, which must not run the CLI when imported."""

import importlib
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from open_agent_compiler.model.core.workflow_model import WorkflowStepDefinition
from open_agent_compiler.model.script_tool import ScriptTool
from open_agent_compiler.compiler.script import build, build_variant


def test_runtime_exports_what_tool_scripts_import(tmp_path: Path) -> None:
    from open_agent_compiler.runtime import MOCK_ENV, RESOURCES_ENV, ResourceHandle
    from open_agent_compiler.runtime import ScriptTool as RuntimeScriptTool

    assert RuntimeScriptTool is ScriptTool
    assert (MOCK_ENV, RESOURCES_ENV) == ("OAC_MOCK_RESPONSE", "OAC_RESOURCES_JSON")
    handle = ResourceHandle("db", "sqlite", {"path": str(tmp_path / "x.db")})
    assert (handle.name, handle.kind, handle.mock_only) == ("db", "sqlite", False)
    with handle.sqlite_connect() as connection:
        assert isinstance(connection, sqlite3.Connection)
    with pytest.raises(RuntimeError, match="mock_only"):
        ResourceHandle("db", "sqlite", {}, mock_only=True).sqlite_connect()
    with pytest.raises(ValueError, match="not 'sqlite'"):
        ResourceHandle("db", "postgres", {}).sqlite_connect()


def test_compile_module_and_agent_model_paths() -> None:
    compile_module = importlib.import_module("open_agent_compiler.compiler.compile")
    assert compile_module.build is build and compile_module.build_variant is build_variant
    for name in ("active_context", "apply_variant", "get_dialect", "CompilationContext", "VariantSpec"):
        assert hasattr(compile_module, name), name
    agent_model = importlib.import_module("open_agent_compiler.model.core.agent_model")
    assert agent_model.WorkflowStepDefinition is WorkflowStepDefinition


def test_importing_main_does_not_run_the_cli() -> None:
    probe = "import open_agent_compiler.__main__; print('still here')"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, check=False)
    assert (done.returncode, done.stdout.strip()) == (0, "still here"), done.stderr
    ran = subprocess.run([sys.executable, "-m", "open_agent_compiler", "--help"], capture_output=True, text=True,
                         timeout=60, check=False)
    assert ran.returncode == 0 and "Usage:" in ran.stdout
