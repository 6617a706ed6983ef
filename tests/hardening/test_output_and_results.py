"""What oac prints and writes when the input is hostile or the disk is full: control characters never reach the
terminal raw; a results log that cannot take a record is one line and exit 2, and no test goes green without
its record; script target names are validated before anything is written."""

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from cli_project import ARGS, OAC, oac, one_line, quickstart

HOSTILE = "\x1b[2J\x1b]0;pwned\x07\rOVERWRITTEN\x9b31m\x7f"


def test_control_characters_in_evidence_are_escaped_on_the_terminal(tmp_path: Path) -> None:
    root = quickstart(tmp_path)
    agents = root / "agents.py"
    (root / "hostile.py").write_text(f"def mock(payload):\n    raise ValueError({HOSTILE!r})\n")
    text = agents.read_text().replace('mock=MockResponse(kind="fixed",\n                          fixed_output={"text": "DEFAULT", "from": "tool.mock"})',
                                      'mock=MockResponse(kind="callable", callable_spec="hostile:mock")')
    assert "hostile:mock" in text
    agents.write_text(text)
    for command in ((OAC, "test", *ARGS), (sys.executable, "-m", "doit", "test")):
        if command[0] != OAC:
            (root / "dodo.py").write_text("from open_agent_compiler.tasks import DOIT_CONFIG, task_test  # noqa\n")
            (root / "pyproject.toml").write_text('[tool.oac]\nfactory = "agents:registry"\nconfig = "prod"\n')
        done = subprocess.run(command, cwd=root, capture_output=True, timeout=120)
        shown = done.stdout + done.stderr
        assert b"FAIL 'echo-default-mock'" in shown, shown
        for raw in (b"\x1b", b"\x07", b"\r", b"\x7f", "\x9b".encode()):
            assert raw not in shown, (raw, shown)
        assert b"\\x1b[2J\\x1b]0;pwned\\x07" in shown and b"OVERWRITTEN\\x9b31m\\x7f" in shown


def test_an_error_line_naming_hostile_input_is_escaped_too(tmp_path: Path) -> None:
    root = quickstart(tmp_path)
    (root / "hostile_factory.py").write_text(f"def registry():\n    raise ValueError({HOSTILE!r})\n")
    done = subprocess.run([OAC, "test", "hostile_factory:registry", "--config", "prod"], cwd=root,
                          capture_output=True, timeout=120)
    assert done.returncode == 2 and b"raised ValueError" in done.stderr
    for raw in (b"\x1b", b"\x07", b"\r", b"\x7f", "\x9b".encode()):
        assert raw not in done.stderr, (raw, done.stderr)
    assert b"\\x1b[2J" in done.stderr


ENOSPC = '''
import errno, os, sys
real = os.write
def write(fd, data):
    try:
        target = os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        target = ""
    if target.endswith("test_results.jsonl"):
        raise OSError(errno.ENOSPC, "No space left on device")
    return real(fd, data)
os.write = write
from open_agent_compiler.cli import main
sys.argv = ["oac", *sys.argv[1:]]
main()
'''


@pytest.mark.parametrize("jobs", [(), ("-n", "2")])
def test_a_full_disk_under_the_results_log_is_one_line_and_nothing_goes_green(jobs: tuple[str, ...],
                                                                             tmp_path: Path) -> None:
    root = quickstart(tmp_path)
    full = tmp_path / "enospc.py"
    full.write_text(ENOSPC)
    done = subprocess.run([sys.executable, str(full), "test", *ARGS, *jobs], cwd=root, capture_output=True,
                          text=True, timeout=120)
    one_line(done, "cannot write results file", "test_results.jsonl", "No space left on device")
    again = oac(root, "test", *ARGS)  # a working disk: every test runs, none was saved green without its record
    assert again.returncode == 0, again.stdout + again.stderr
    assert "passed=4 failed=0 skipped=0 not_runnable=1" in again.stdout
    records = [json.loads(line) for line in (root / ".oac/test_results.jsonl").read_text().splitlines()]
    assert len(records) == 5


def _project_with_script_target(tmp_path: Path, target: str) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    (root / ".git").mkdir()
    (root / "agents.py").write_text(textwrap.dedent(f'''
        from open_agent_compiler import (AgentDefinition, AgentHeader, AgentRegistry, CompilationConfig,
                                         JsonToolPermission, MockResponse, ScriptDefinition, TemplateSlot,
                                         TemplateTree, ToolDefinition, ToolDefinitionHeader,
                                         ToolDefinitionLogicJson, ToolScriptDefinition, ToolTest)

        def registry():
            tool = ToolDefinition(header=ToolDefinitionHeader(name="run", description="r"),
                                  json_tool=ToolDefinitionLogicJson(
                                      permission_json=JsonToolPermission(allowed_commands=["python3 x.py"]),
                                      tool_scripts=[ToolScriptDefinition(scripts=[
                                      ScriptDefinition(target_file_path={target!r}, script_contents="print(1)")])]),
                                  mock=MockResponse(kind="echo"), tool_tests=[ToolTest(name="t", input={{}})])
            reg = AgentRegistry()
            reg.register_agent("a", AgentDefinition(header=AgentHeader(agent_id="a", name="a", description="d"),
                                                    system_prompt="p", extra_tools=[tool]))
            reg.register_template(TemplateTree(name="t", slots=[TemplateSlot(name="primary", default_agent_id="a")]))
            reg.create_compilation_config(CompilationConfig(name="prod", template_name="t"))
            return reg
    '''))
    return root


@pytest.mark.parametrize("target, needle", [
    ("scripts/" + "a" * 300 + ".py", "a path segment is longer than 255 bytes"),
    ("/".join(["d" * 200] * 6) + "/x.py", "longer than 1024 bytes"),
    ("scripts/bell\x07.py", "control characters"),
    ("scripts/del\x7f.py", "control characters"),
])
@pytest.mark.parametrize("command", [("compile", "--target", "out"), ("test", "--kind", "tool")])
def test_script_target_names_are_validated_by_compile_and_test_before_anything_is_written(
        target: str, needle: str, command: tuple[str, ...], tmp_path: Path) -> None:
    root = _project_with_script_target(tmp_path, target)
    before = sorted(p.name for p in root.rglob("*") if "__pycache__" not in p.parts)
    done = oac(root, command[0], "agents:registry", "--config", "prod", *command[1:])
    line = one_line(done, "unsafe script target of tool 'run'", needle)
    assert len(line) < 300 and "\x07" not in line
    assert not (root / ".oac").exists() and not (root / "out").exists()  # not even doit's state file
    assert sorted(p.name for p in root.rglob("*") if "__pycache__" not in p.parts) == before
