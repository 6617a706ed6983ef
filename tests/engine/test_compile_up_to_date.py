"""`oac compile` with nothing changed is doit's up-to-date check and nothing more (issue 18): the factory is not
loaded, nothing is rendered or read back; anything the compile read or wrote that changed since makes it run."""

import json
import os
from pathlib import Path

import pytest

from engine_project import Project

AGENTS = '''
import os
from open_agent_compiler import (
    AgentDefinition, AgentHeader, AgentRegistry, CompilationConfig, TemplateSlot, TemplateTree,
)
from prompts import PROMPT


def registry():
    with open(os.environ["OAC_TEST_CALLS"], "a") as calls:  # outside the project: counts factory calls
        calls.write("x")
    reg = AgentRegistry()
    reg.register_agent("alpha", AgentDefinition(header=AgentHeader(agent_id="alpha", name="alpha", description="A."),
                                                system_prompt=PROMPT))
    reg.register_template(TemplateTree(name="tpl", slots=[TemplateSlot(name="primary", default_agent_id="alpha")]))
    reg.create_compilation_config(CompilationConfig(name="prod", template_name="tpl"))
    return reg
'''
OTHER = AGENTS.replace("def registry():", "def other():").replace("system_prompt=PROMPT", 'system_prompt="OTHER"')
OUT = "out/.opencode/agents/primary.md"


@pytest.fixture
def proj(tmp_path: Path) -> Project:
    project = Project.of(tmp_path / "comp", {"agents.py": AGENTS + OTHER, "prompts.py": 'PROMPT = "ALPHA"\n'})
    project.calls = tmp_path / "calls"  # type: ignore[attr-defined]
    return project


def compile_(proj: Project, factory: str = "agents:registry", *extra: str) -> str:
    done = proj.oac("compile", factory, "--config", "prod", "--target", "out", "--dialect", "opencode", "-v", *extra,
                    check_code=0, env={"OAC_TEST_CALLS": str(proj.calls)})  # type: ignore[attr-defined]
    return done.stdout + done.stderr


def calls(proj: Project) -> int:
    return len(proj.calls.read_text()) if proj.calls.exists() else 0  # type: ignore[attr-defined]


def test_an_unchanged_compile_does_not_load_the_factory_and_reports_as_before(proj: Project) -> None:
    first = compile_(proj)
    assert "written=1 " in first and calls(proj) == 1
    mtime = (proj.root / OUT).stat().st_mtime_ns
    again = compile_(proj)
    assert calls(proj) == 1  # doit's up-to-date check only
    assert "written=0 unchanged=1 removed=0 kept=0" in again and f"unchanged out/{OUT[4:]}" in again
    assert (proj.root / OUT).stat().st_mtime_ns == mtime


def test_an_edited_module_or_another_factory_compiles_again(proj: Project) -> None:
    compile_(proj)
    proj.edit("prompts.py", '"ALPHA"', '"ALPHA, edited"')
    assert "written=1 " in compile_(proj) and calls(proj) == 2
    assert "ALPHA, edited" in (proj.root / OUT).read_text()
    assert "written=1 " in compile_(proj, "agents:other") and "OTHER" in (proj.root / OUT).read_text()


def test_an_output_edited_or_deleted_since_is_seen(proj: Project) -> None:
    compile_(proj)
    (proj.root / OUT).write_text("my edit\n")
    assert "kept=1" in compile_(proj) and calls(proj) == 2  # compiled again: the edit is reported, and kept
    assert "kept=1" in compile_(proj) and calls(proj) == 2  # and that report stays while nothing changes
    (proj.root / OUT).unlink()
    assert "written=1 " in compile_(proj) and (proj.root / OUT).is_file()


def test_a_dependency_gone_since_is_a_run_not_an_error(proj: Project) -> None:
    compile_(proj)
    proj.write("agents.py", (AGENTS + OTHER).replace("from prompts import PROMPT", 'PROMPT = "INLINE"'))
    (proj.root / "prompts.py").unlink()
    assert "written=1 " in compile_(proj) and "INLINE" in (proj.root / OUT).read_text()


def test_a_folder_the_factory_listed_is_checked(proj: Project, monkeypatch: pytest.MonkeyPatch) -> None:
    from open_agent_compiler.tasks import compile_tasks

    folder = proj.root / "prompts.d"
    folder.mkdir()
    values = {"factory": "f", "stamps": {}, "listings": {f"{folder}/": compile_tasks._listing(f"{folder}/")}}
    check = compile_tasks.OutputsUnchanged("f", proj.root / "out")
    assert check(None, values)
    (folder / "new.md").write_text("a prompt the factory will find\n")
    assert not check(None, values)


def test_a_data_file_the_factory_reads_is_a_dependency(proj: Project) -> None:
    proj.write("prompt.txt", "FROM A FILE\n")
    proj.write("agents.py", (AGENTS + OTHER).replace(
        "from prompts import PROMPT", "PROMPT = open(os.path.join(os.path.dirname(__file__), 'prompt.txt')).read()"))
    compile_(proj)
    proj.write("prompt.txt", "EDITED\n")
    compile_(proj)
    assert "EDITED" in (proj.root / OUT).read_text()


def test_an_existence_check_of_the_factory_is_no_file_dep_and_is_checked(proj: Project) -> None:
    """A factory that checks a path (`Path.resolve()`, `os.path.exists`) compiles (the check is no file doit can
    hash: it once made `oac compile` fail with doit's exit 2), and the path appearing since compiles again."""
    proj.write("agents.py", (AGENTS + OTHER).replace(
        "from prompts import PROMPT",
        "from prompts import PROMPT\nif os.path.exists(os.path.join(os.path.dirname(os.path.realpath(__file__)), "
        "'flag')):\n    PROMPT = 'FLAGGED'"))
    assert "written=1 " in compile_(proj) and calls(proj) == 1
    assert "written=0 " in compile_(proj) and calls(proj) == 1
    proj.write("flag", "")
    assert "written=1 " in compile_(proj) and "FLAGGED" in (proj.root / OUT).read_text()
