"""`task_compile`: compiling into a project as doit tasks (`doit compile`, `doit clean compile`, `oac compile`)."""

import subprocess
import sys
from pathlib import Path

import pytest

from engine_project import Project

DOIT = str(Path(sys.executable).with_name("doit"))

AGENTS = '''
from open_agent_compiler import (
    AgentDefinition, AgentHeader, AgentRegistry, CompilationConfig, TemplateSlot, TemplateTree, ToolDefinition,
    ToolDefinitionHeader,
)
from open_agent_compiler.model.core.tool import (
    JsonToolPermission, ScriptDefinition, ToolDefinitionLogicJson, ToolScriptDefinition,
)
from prompts import ALPHA_PROMPT


def registry():
    runner = ToolDefinition(
        header=ToolDefinitionHeader(name="run", description="Runs."),
        json_tool=ToolDefinitionLogicJson(
            permission_json=JsonToolPermission(tool_name="run", value="allow"),
            tool_scripts=[ToolScriptDefinition(scripts=[
                ScriptDefinition(target_file_path="scripts/run.py", source_file_path="src/run.py"),
                ScriptDefinition(target_file_path="scripts/other.py", source_file_path="src/other.py"),
            ])]))
    alpha = AgentDefinition(header=AgentHeader(agent_id="alpha", name="alpha", description="First."),
                            system_prompt=ALPHA_PROMPT, extra_tools=[runner])
    beta = AgentDefinition(header=AgentHeader(agent_id="beta", name="beta", description="Second."),
                           system_prompt="BETA")
    reg = AgentRegistry()
    reg.register_agent("alpha", alpha)
    reg.register_agent("beta", beta)
    reg.register_template(TemplateTree(name="tpl", slots=[TemplateSlot(name="primary", default_agent_id="alpha"),
                                                          TemplateSlot(name="helper", default_agent_id="beta")]))
    reg.create_compilation_config(CompilationConfig(name="prod", template_name="tpl"))
    return reg
'''

PYPROJECT = '''
[tool.oac]
factory = "agents:registry"
config = "prod"

[[tool.oac.compile]]
config = "prod"
dialect = "opencode"
target = "out"

[[tool.oac.compile]]
config = "prod"
dialect = "claude"
target = "out"
'''


@pytest.fixture
def proj(tmp_path) -> Project:
    return Project.of(tmp_path / "comp", {
        "agents.py": AGENTS, "prompts.py": 'ALPHA_PROMPT = "ALPHA"\n', "src/run.py": "print('run')\n",
        "src/other.py": "print('other')\n", "pyproject.toml": PYPROJECT,
        "dodo.py": "from open_agent_compiler.tasks import DOIT_CONFIG, task_compile, task_test  # noqa: F401\n",
    })


def doit(proj: Project, *args: str, code: int = 0) -> subprocess.CompletedProcess:
    done = subprocess.run([DOIT, *args], cwd=proj.root, capture_output=True, text=True, timeout=120)
    assert done.returncode == code, done.stdout + done.stderr
    return done


def stamps(proj: Project) -> dict[str, int]:
    out = proj.root / "out"
    return {p.relative_to(out).as_posix(): p.stat().st_mtime_ns for p in sorted(out.rglob("*")) if p.is_file()}


def changed(before: dict[str, int], after: dict[str, int]) -> set[str]:
    return {path for path in after if before.get(path) != after[path]}


def test_compile_twice_then_edits_rewrite_only_what_changed(proj: Project) -> None:
    first = doit(proj, "compile")
    assert "-- compile:" not in first.stdout and ".  compile:prod:opencode:out" in first.stdout
    written = stamps(proj)
    assert {".opencode/agents/primary.md", ".claude/agents/primary.md", "scripts/run.py", "scripts/other.py"} <= set(written)
    again = doit(proj, "compile")
    assert again.stdout.count("-- compile:") == 2 and ".  compile:" not in again.stdout  # nothing to do
    assert stamps(proj) == written
    # an edit to a module the factory imports: only the primary agent's files change
    proj.edit("prompts.py", '"ALPHA"', '"ALPHA, edited"')
    doit(proj, "compile")
    after_agent = stamps(proj)
    assert changed(written, after_agent) - {".oac/manifest.json"} == {".opencode/agents/primary.md",
                                                                      ".claude/agents/primary.md"}
    assert "ALPHA, edited" in (proj.root / "out/.opencode/agents/primary.md").read_text()
    # an edit to a script source: only that script is rewritten
    proj.edit("src/run.py", "'run'", "'run, edited'")
    doit(proj, "compile")
    after_script = stamps(proj)
    assert changed(after_agent, after_script) - {".oac/manifest.json"} == {"scripts/run.py"}
    assert doit(proj, "compile").stdout.count("-- compile:") == 2


def test_clean_takes_back_exactly_what_it_wrote(proj: Project) -> None:
    proj.write("out/notes.md", "the user's own file\n")
    proj.write("out/.opencode/agents/mine.md", "a user's agent\n")
    doit(proj, "compile")
    doit(proj, "clean", "compile")
    left = sorted(p.relative_to(proj.root / "out").as_posix() for p in (proj.root / "out").rglob("*") if p.is_file())
    assert [p for p in left if not p.startswith(".oac/")] == [".opencode/agents/mine.md", "notes.md"]
    assert ".  compile:" in doit(proj, "compile").stdout  # its files are gone: it runs again


def test_oac_compile_goes_through_the_same_task(proj: Project) -> None:
    done = proj.oac("compile", "agents:registry", "--config", "prod", "--target", "out", "--dialect", "opencode",
                    check_code=0)
    assert "oac compile: opencode -> out: written=" in done.stdout
    # the state it left is doit's: `doit compile` finds that task up to date
    assert "-- compile:prod:opencode:out" in doit(proj, "compile").stdout


def test_a_bad_compile_entry_is_one_line(proj: Project) -> None:
    proj.write("pyproject.toml", PYPROJECT + '\n[[tool.oac.compile]]\nconfig = "prod"\ndialect = "nope"\n')
    done = doit(proj, "compile", code=2)
    assert "nope" in done.stderr and "Traceback" not in done.stderr


def test_compile_tasks_are_named_by_the_resolved_target(proj: Project) -> None:
    """`oac compile --target out` typed in a subfolder is another folder than the project's `out`: it must not
    share (and overwrite) the doit state of the project's compile task."""
    assert ".  compile:prod:opencode:out" in doit(proj, "compile").stdout
    (proj.root / "sub").mkdir()
    proj.edit("prompts.py", '"ALPHA"', '"ALPHA2"')
    done = subprocess.run([str(Path(sys.executable).with_name("oac")), "compile", "agents:registry", "--config",
                           "prod", "--target", "out"], cwd=proj.root / "sub", capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "ALPHA2" in (proj.root / "sub/out/.opencode/agents/primary.md").read_text()
    assert ".  compile:prod:opencode:out" in doit(proj, "compile").stdout  # the project's out/ is stale: it runs
    assert "ALPHA2" in (proj.root / "out/.opencode/agents/primary.md").read_text()
    assert "-- compile:prod:opencode:out" in doit(proj, "compile").stdout


def test_a_file_the_factory_reads_is_a_compile_input(proj: Project) -> None:
    proj.write("prompts/alpha.md", "FROM A FILE\n")
    proj.edit("prompts.py", 'ALPHA_PROMPT = "ALPHA"', 'from pathlib import Path\nALPHA_PROMPT = Path("prompts/alpha.md").read_text()')
    assert ".  compile:prod:opencode:out" in doit(proj, "compile").stdout
    assert "-- compile:prod:opencode:out" in doit(proj, "compile").stdout
    import sqlite3
    proj.write("prompts/alpha.md", "EDITED\n")
    assert ".  compile:prod:opencode:out" in doit(proj, "compile").stdout
    assert "EDITED" in (proj.root / "out/.opencode/agents/primary.md").read_text()
    db = sqlite3.connect(proj.root / ".oac" / "doit-state.sqlite3")
    assert any("prompts/alpha.md" in str(row) for row in db.execute("select * from doit"))  # a file_dep


def test_a_folder_the_factory_lists_is_a_compile_input(proj: Project) -> None:
    """A listing is no file_dep: the compile task is up to date only while its compiled bytes are the same."""
    proj.write("prompts/parts/a.md", "A\n")
    proj.edit("prompts.py", 'ALPHA_PROMPT = "ALPHA"',
              'import os\nALPHA_PROMPT = " ".join(sorted(os.listdir("prompts/parts")))')
    assert ".  compile:prod:opencode:out" in doit(proj, "compile").stdout
    assert "-- compile:prod:opencode:out" in doit(proj, "compile").stdout
    proj.write("prompts/parts/b.md", "B\n")
    assert ".  compile:prod:opencode:out" in doit(proj, "compile").stdout
    assert "a.md b.md" in (proj.root / "out/.opencode/agents/primary.md").read_text()
