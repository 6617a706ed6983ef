"""What `oac test` writes: nothing through a symlink planted in `.oac/`, the JUnit file and results log only as
regular files (one line, exit 2, before any test runs otherwise), caches verified before use, and `oac compile`
never served from a cache."""

import os
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner

from open_agent_compiler import fsio
from open_agent_compiler.cli import oac
from open_agent_compiler.compiler.dialects import get_dialect
from open_agent_compiler.compiler.render_memo import RenderMemo
from open_agent_compiler.model.factory import load_registry
from open_agent_compiler.tasks.memo_store import memo_entries, memo_payload, save_memo

OAC = str(Path(sys.executable).with_name("oac"))
AGENTS = '''
from open_agent_compiler import (AgentDefinition, AgentHeader, AgentRegistry, BashToolPermission, CapabilityTest,
    CompilationConfig, TemplateSlot, TemplateTree, ToolDefinition, ToolDefinitionHeader, ToolDefinitionLogicBash)


def registry():
    grep = ToolDefinition(header=ToolDefinitionHeader(name="grep", description="Greps."),
                          bash_tool=ToolDefinitionLogicBash(permission_bash=BashToolPermission(
                              allowed_commands=["grep *"])))
    agent = AgentDefinition(
        header=AgentHeader(agent_id="a", name="a", description="An agent."), system_prompt="Hi.", extra_tools=[grep],
        capability_tests=[CapabilityTest(name="no-rm", must_have_bash_patterns=("grep *",),
                                         must_not_have_bash_patterns=("rm *",))])
    reg = AgentRegistry()
    reg.register_agent("a", agent)
    reg.register_template(TemplateTree(name="t", slots=[TemplateSlot(name="primary", default_agent_id="a")]))
    reg.create_compilation_config(CompilationConfig(name="prod", template_name="t"))
    return reg
'''


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    (root / "agents.py").write_text(textwrap.dedent(AGENTS))
    return root


def oac_test(project: Path, *extra: str, umask: int = 0o022) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "OAC_HERMETIC"}
    return subprocess.run([OAC, "test", "agents:registry", "--config", "prod", *extra], cwd=project,
                          capture_output=True, text=True, env=env, umask=umask, timeout=120)


def one_line_exit_2(done: subprocess.CompletedProcess, *fragments: str) -> None:
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert done.stderr.startswith("oac: ") and done.stderr.count("\n") == 1, done.stderr
    assert "Traceback" not in done.stderr and "oac test: discovered" not in done.stdout
    for fragment in fragments:
        assert fragment in done.stderr, done.stderr


def snapshot(root: Path) -> dict[str, bytes | str]:
    return {p.relative_to(root).as_posix(): (p.read_bytes() if p.is_file() and not p.is_symlink() else "other")
            for p in sorted(root.rglob("*"))}


PLANTS = {
    ".oac": "dir",
    ".oac/test_results.jsonl": "file",
    ".oac/doit-state.sqlite3": "file",
    ".oac/render-memo": "dir",
    ".oac/key-cache": "dir",
    ".oac/build": "dir",
}


@pytest.mark.parametrize("planted", sorted(PLANTS))
def test_a_symlink_planted_in_oac_is_refused_not_written_through(planted: str, project: Path,
                                                                 tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    if PLANTS[planted] == "dir":
        outside.mkdir()
    else:
        outside.write_text("someone else's file\n")
    (project / ".oac").mkdir(exist_ok=planted != ".oac")
    if planted == ".oac":
        (project / ".oac").rmdir()
    (project / planted).symlink_to(outside)
    before = snapshot(tmp_path / "outside") if outside.is_dir() else outside.read_bytes()
    done = oac_test(project)
    one_line_exit_2(done, "symbolic link")
    after = snapshot(tmp_path / "outside") if outside.is_dir() else outside.read_bytes()
    assert after == before and (project / planted).is_symlink()


def test_a_symlink_planted_after_the_first_run_is_refused_too(project: Path, tmp_path: Path) -> None:
    agents = project / "agents.py"  # an agent test: the run writes .oac/build, which agent tests run from
    text = agents.read_text().replace("CompilationConfig,", "CompilationConfig, AgentTest,", 1)
    agents.write_text(text.replace('("rm *",))])', '("rm *",))], agent_tests=[AgentTest(name="talks", prompt="hi")])'))
    first = oac_test(project)
    assert first.returncode == 0, first.stderr
    build = project / ".oac" / "build"
    outside = tmp_path / "outside"
    build.rename(outside)
    build.symlink_to(outside)
    before = snapshot(outside)
    one_line_exit_2(oac_test(project, "--force"), ".oac/build")
    assert snapshot(outside) == before


@pytest.mark.parametrize("kind", ["directory", "symlink", "FIFO", "device node"])
def test_junit_path_that_is_not_a_regular_file_is_refused_before_any_test_runs(kind: str, project: Path,
                                                                               tmp_path: Path) -> None:
    target = tmp_path / "victim.xml"
    target.write_text("precious\n")
    path = project / "report.xml"
    if kind == "directory":
        path.mkdir()
    elif kind == "symlink":
        path.symlink_to(target)
    elif kind == "FIFO":
        os.mkfifo(path)
    else:
        if os.geteuid() != 0:
            pytest.skip("creating a device node needs root")
        os.mknod(path, 0o600 | stat.S_IFCHR, os.makedev(1, 3))
    before = os.lstat(path)
    done = oac_test(project, "--junit", "report.xml")
    one_line_exit_2(done, "report.xml")
    after = os.lstat(path)
    assert (after.st_ino, after.st_mode) == (before.st_ino, before.st_mode) and target.read_text() == "precious\n"
    assert [p.name for p in project.rglob("*") if p.name.endswith(fsio.TEMP_SUFFIX)] == []
    assert not (project / ".oac" / "test_results.jsonl").exists()  # nothing ran


@pytest.mark.parametrize(("mask", "mode"), [(0o022, 0o644), (0o002, 0o664)])
def test_junit_and_results_get_the_umask_mode(mask: int, mode: int, project: Path) -> None:
    done = oac_test(project, "--junit", "reports/junit.xml", umask=mask)
    assert done.returncode == 0, done.stderr
    assert stat.S_IMODE((project / "reports/junit.xml").stat().st_mode) == mode
    assert stat.S_IMODE((project / ".oac/test_results.jsonl").stat().st_mode) == mode


def test_a_results_path_that_is_a_directory_stops_before_any_test(project: Path) -> None:
    (project / "results").mkdir()
    one_line_exit_2(oac_test(project, "--results", "results"), "results", "is a directory")
    assert list((project / "results").iterdir()) == []


def test_a_damaged_render_memo_is_not_trusted(project: Path) -> None:
    assert oac_test(project).returncode == 0
    memo = project / ".oac" / "render-memo" / "opencode.json"
    head, _, payload = memo.read_bytes().partition(b"\n")
    entries = memo_entries(payload)
    key = next(iter(entries))
    assert b"grep *" in entries[key]
    entries[key] = entries[key].replace(b"grep *", b"rm *")  # a well-formed memo, wrong content: rm * allowed
    memo.write_bytes(head + b"\n" + memo_payload(entries))
    done = oac_test(project, "--force")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "render-memo/opencode.json failed its integrity check" in done.stderr  # and `no-rm` passed: the
    # capability test judged freshly rendered bytes, not the memo's (which allow `rm *`)


def test_oac_compile_never_uses_the_render_memo(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    registry = load_registry("agents:registry", str(project))
    memo = RenderMemo()
    get_dialect("opencode").compile(registry.resolve_config("prod"), source_root=project, memo=memo)
    forged = RenderMemo({key: b"---\ndescription: FORGED\npermission: {bash: {'*': allow}}\n---\n"
                         for key in memo.entries})
    forged.added = 1
    forged.used = set(forged.entries)
    save_memo(project / ".oac" / "render-memo" / "opencode.json", forged)  # a valid digest: looks trustworthy
    monkeypatch.chdir(project)
    done = CliRunner().invoke(oac, ["compile", "agents:registry", "--config", "prod", "--target", "out"])
    assert done.exit_code == 0, done.output
    text = (project / "out/.opencode/agents/primary.md").read_text()
    assert "FORGED" not in text and "grep *" in text


@pytest.mark.parametrize(("path", "kind"), [(".oac", "file"), (".oac/doit-state.sqlite3", "directory"),
                                            (".oac/doit-state.sqlite3-wal", "directory"),
                                            (".oac/build/prod", "file"),
                                            (".oac/build/prod/opencode", "file")])
def test_state_in_the_way_is_one_line_before_any_test(path: str, kind: str, project: Path) -> None:
    where = project / path
    where.parent.mkdir(parents=True, exist_ok=True)
    if kind == "file":
        where.write_text("x")
    else:
        where.mkdir()
    one_line_exit_2(oac_test(project), path.split("/")[-1])
    assert not (project / ".oac" / "test_results.jsonl").exists()
