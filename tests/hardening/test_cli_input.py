"""Bad input from the command line, from `[tool.oac]` or from a factory: one line naming it, exit 2, no traceback."""

from pathlib import Path

import pytest

from cli_project import ARGS, oac, one_line, quickstart

from open_agent_compiler.errors import FactoryError
from open_agent_compiler.model.factory import load_registry

FACTORIES = '''
import sys


class Escape(BaseException):
    pass


def leaves():
    sys.exit(0)


def leaves_quietly():
    raise SystemExit


def escapes():
    raise Escape("through the roof")


def interrupted():
    raise KeyboardInterrupt
'''


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = quickstart(tmp_path)
    (root / "factories.py").write_text(FACTORIES)
    (root / "exits_on_import.py").write_text("import sys\nsys.exit(0)\n")
    return root


@pytest.mark.parametrize(("spec", "needle"), [
    ("factories:leaves", "called sys.exit(0)"),
    ("factories:leaves_quietly", "called sys.exit(None)"),
    ("factories:escapes", "raised Escape: through the roof"),
    ("exits_on_import:registry", "importing 'exits_on_import' called sys.exit(0)"),
    ("sys:exit", "'exit' is a built-in"),
    ("os:_exit", "'_exit' is a built-in"),
    ("builtins:print", "'print' is a built-in"),
    ("os:abort", "'abort' is a built-in"),
])
@pytest.mark.parametrize("command", ["test", "compile", "info"])
def test_a_factory_cannot_end_oac_quietly(spec: str, needle: str, command: str, project: Path) -> None:
    args = {"test": ("--config", "prod"), "compile": ("--config", "prod", "--target", "out"), "info": ()}[command]
    done = oac(project, command, spec, *args)
    one_line(done, f"factory {spec!r}", needle)
    assert done.stdout == "" and not (project / "out").exists()


def test_a_factory_interrupted_is_exit_130(project: Path) -> None:
    done = oac(project, "test", "factories:interrupted", "--config", "prod")
    assert done.returncode == 130 and "Traceback" not in done.stderr
    assert done.stderr.strip() == "oac: interrupted"


def test_builtins_are_refused_before_they_are_called(tmp_path: Path) -> None:
    # if `sys:exit` were called, SystemExit would escape load_registry instead of this FactoryError
    with pytest.raises(FactoryError, match=r"factory 'sys:exit': 'exit' is a built-in, not a function returning"):
        load_registry("sys:exit", str(tmp_path))
    import os
    import sys
    assert sys.modules["os"] is os and not hasattr(os, "__oac_mtime__")  # the standard library is left alone


@pytest.mark.parametrize(("pyproject", "needle"), [
    ('tool = "x"\n', "'tool' must be a table"),
    ('[tool]\noac = 3\n', "[tool.oac] must be a table"),
    ('[tool.oac]\njobs = -3\n', "[tool.oac] jobs in"),
    ('[tool.oac]\njobs = 0\n', "[tool.oac] jobs in"),
    ('[tool.oac]\ntimeout = -5\n', "[tool.oac] timeout in"),
    ('[tool.oac]\ntimeout = 0\n', "[tool.oac] timeout in"),
    ('[tool.oac]\ntimeout = inf\n', "[tool.oac] timeout in"),
    ('[tool.oac]\ntimeout = nan\n', "[tool.oac] timeout in"),
    ('[tool.oac]\ntimeout = "soon"\n', "[tool.oac] timeout in"),
    ('[tool.oac]\ntimeout = true\n', "[tool.oac] timeout in"),
    ('[tool.oac]\njobs = true\n', "[tool.oac] jobs in"),
    ('[tool.oac]\njobs = 2.5\n', "[tool.oac] jobs in"),
    ('[tool.oac]\nkind = "tools"\n', "kind"),
    ('[tool.oac]\njbos = 2\n', "[tool.oac] jbos in"),
    ('[tool.oac\n', "cannot read"),
])
def test_bad_pyproject_is_one_line_naming_the_file(pyproject: str, needle: str, tmp_path: Path) -> None:
    root = quickstart(tmp_path)
    (root / "pyproject.toml").write_text(pyproject)
    one_line(oac(root, "test", *ARGS), "pyproject.toml" if "kind" not in needle else "kind", needle)


@pytest.mark.parametrize(("flag", "value"), [
    ("--jobs", "-3"), ("--jobs", "0"), ("--timeout", "-5"), ("--timeout", "0"), ("--timeout", "inf"),
    ("--timeout", "nan"), ("--timeout", "-inf"),
])
def test_command_line_and_pyproject_share_one_validation(flag: str, value: str, tmp_path: Path) -> None:
    root = quickstart(tmp_path)
    line = one_line(oac(root, "test", *ARGS, flag, value), f"bad test option {flag}")
    key = flag.lstrip("-")
    (root / "pyproject.toml").write_text(f"[tool.oac]\n{key} = {value}\n")
    from_file = one_line(oac(root, "test", *ARGS), f"[tool.oac] {key} in")
    assert line.split(": ", 2)[-1].split(" (got")[0] == from_file.split(": ", 2)[-1].split(" (got")[0]  # same rule
    assert not (root / ".oac" / "test_results.jsonl").exists()


def test_lone_surrogate_in_a_test_input_is_one_line(tmp_path: Path) -> None:
    root = quickstart(tmp_path)
    agents = root / "agents.py"
    agents.write_text(agents.read_text().replace('input={"text": "hi"}, mock_profile="ci"',
                                                 'input={"text": ["ok", "hi\\ud800"]}, mock_profile="ci"'))
    one_line(oac(root, "test", *ARGS), "'tool:echo-tool::echo-via-profile'", "input.text[1]", "lone surrogate")
    assert not (root / ".oac" / "test_results.jsonl").exists()


@pytest.mark.parametrize("flag", ["--variant", "--filter", "--config"])
def test_undecodable_bytes_in_an_option_are_refused_by_the_one_validation(flag: str, tmp_path: Path) -> None:
    root = quickstart(tmp_path)
    line = one_line(oac(root, "test", "agents:registry", *(("--config", "prod") if flag != "--config" else ()),
                        flag, "bad\udcff"), f"bad test option {flag}")  # pydantic or our own rule says why
    assert "\\udcff" in line
    assert not (root / ".oac" / "test_results.jsonl").exists()
