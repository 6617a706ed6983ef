"""`oac compile` into a target: nothing lost (journal + lock), nothing outside the target or through a symlink,
fresh clones and `--adopt`, modes. Real processes where the claim is about processes (kill -9, concurrency)."""

import json
import os
import shutil
import signal
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
from open_agent_compiler.compiler.manifest import MANIFEST_PATH, load_manifest
from open_agent_compiler.compiler.writer import CHANGED, LINK, NOT_OURS, WriteReport, write_output
from open_agent_compiler.errors import OacError
from open_agent_compiler.model.factory import load_registry
from open_agent_compiler.model.hashing import digest_bytes

VERSION = "OAC_WRITES_VERSION"
AGENTS = '''
import os
from open_agent_compiler.model.core.agent import AgentDefinition, AgentHeader, AgentToolPermissions, McpServer
from open_agent_compiler.model.core.template import CompilationConfig, TemplateSlot, TemplateTree
from open_agent_compiler.model.core.tool import (BashToolPermission, JsonToolPermission, ScriptDefinition,
    ToolDefinition, ToolDefinitionHeader, ToolDefinitionLogicBash, ToolDefinitionLogicJson, ToolScriptDefinition)
from open_agent_compiler.model.registry import AgentRegistry


def registry():
    v = os.environ.get("OAC_WRITES_VERSION", "1")
    script = ToolDefinition(
        header=ToolDefinitionHeader(name="run", description="Runs " + v),
        json_tool=ToolDefinitionLogicJson(
            permission_json=JsonToolPermission(allowed_commands=["python3 scripts/run.py"]),
            tool_scripts=[ToolScriptDefinition(scripts=[ScriptDefinition(
                target_file_path="scripts/run.py", script_contents="#!/usr/bin/env python3\\nprint(" + v + ")\\n")])]))
    grep = ToolDefinition(header=ToolDefinitionHeader(name="grep", description="Greps."),
                          bash_tool=ToolDefinitionLogicBash(permission_bash=BashToolPermission(
                              allowed_commands=["grep v" + v + " *"])))
    secret = [McpServer(name="notes", command=["notes-server"], environment={"TOKEN": "s3cr3t"})]
    reg = AgentRegistry()
    reg.register_agent("lead", AgentDefinition(
        header=AgentHeader(agent_id="lead", name="lead", description="Lead " + v), system_prompt="Lead " + v,
        extra_tools=[script, grep], tool_permissions=AgentToolPermissions(read=True, mcp=True),
        mcp_servers=secret if os.environ.get("OAC_WRITES_SECRET") else []))
    reg.register_agent("helper", AgentDefinition(
        header=AgentHeader(agent_id="helper", name="helper", description="Helper " + v),
        system_prompt="Helper " + v, extra_tools=[grep]))
    reg.register_template(TemplateTree(name="t", slots=[TemplateSlot(name="primary", default_agent_id="lead"),
                                                        TemplateSlot(name="helper", default_agent_id="helper")]))
    reg.create_compilation_config(CompilationConfig(name="prod", template_name="t"))
    return reg
'''

DRIVER = '''
import os, signal, sys
from pathlib import Path
root, target, dialect, kill_at, when = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5]
from open_agent_compiler.model.factory import load_registry
from open_agent_compiler.compiler.dialects import get_dialect
from open_agent_compiler.compiler.writer import write_output
real, count = os.rename, 0
def rename(*args, **kwargs):
    global count
    count += 1
    if count == kill_at and when == "before":
        os.kill(os.getpid(), signal.SIGKILL)
    real(*args, **kwargs)
    if count == kill_at and when == "after":
        os.kill(os.getpid(), signal.SIGKILL)
os.rename = rename
resolved = load_registry("agents:registry", root).resolve_config("prod")
write_output(get_dialect(dialect).compile(resolved, source_root=Path(root)), target, dialect=dialect)
'''

LOOPER = '''
import sys
from pathlib import Path
root, target, dialect, rounds = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
import os
from open_agent_compiler.model.factory import load_registry
from open_agent_compiler.compiler.dialects import get_dialect
from open_agent_compiler.compiler.writer import write_output
outputs = []
for version in ("1", "2"):
    os.environ["OAC_WRITES_VERSION"] = version
    outputs.append(get_dialect(dialect).compile(load_registry("agents:registry", root).resolve_config("prod"),
                                                source_root=Path(root)))
sys.stdin.readline()  # both processes start their compiles together
for index in range(rounds):
    write_output(outputs[index % 2], target, dialect=dialect)
'''


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    (root / "agents.py").write_text(textwrap.dedent(AGENTS))
    monkeypatch.delenv(VERSION, raising=False)
    monkeypatch.delenv("OAC_WRITES_SECRET", raising=False)
    return root


def compiled(project: Path, dialect: str, version: str = "1"):  # type: ignore[no-untyped-def]
    old = os.environ.get(VERSION)
    os.environ[VERSION] = version
    try:
        registry = load_registry("agents:registry", str(project))
        return get_dialect(dialect).compile(registry.resolve_config("prod"), source_root=project)
    finally:
        if old is None:
            del os.environ[VERSION]
        else:
            os.environ[VERSION] = old


def compile_into(project: Path, target: Path, dialect: str, version: str = "1", **options: bool) -> WriteReport:
    return write_output(compiled(project, dialect, version), target, dialect=dialect, **options)


def files(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and not p.is_symlink()}


def temp_files(root: Path) -> list[str]:
    return [p.name for p in root.rglob("*") if p.name.endswith(fsio.TEMP_SUFFIX)]


def python(*args: str, stdin: int | None = None) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", *args], stdin=stdin, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


# a compile killed part-way -------------------------------------------------------------------------------------------
def count_renames(project: Path, target: Path, dialect: str, monkeypatch: pytest.MonkeyPatch) -> int:
    calls = []
    real = os.rename
    monkeypatch.setattr(os, "rename", lambda *a, **k: (calls.append(a), real(*a, **k))[1])
    compile_into(project, target, dialect, "2")
    monkeypatch.undo()
    return len(calls)


@pytest.mark.slow
@pytest.mark.parametrize("dialect", ["claude", "codex"])  # merged settings.json / AGENTS.md, scripts, agents
def test_a_compile_killed_at_any_point_disowns_nothing_and_leaves_no_temp_file(
    dialect: str, project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    base, reference = tmp_path / "base", tmp_path / "reference"
    compile_into(project, base, dialect, "1")
    compile_into(project, reference, dialect, "2")
    probe = tmp_path / "probe"
    shutil.copytree(base, probe, symlinks=True)
    renames = count_renames(project, probe, dialect, monkeypatch)
    assert renames >= 5  # journal, at least three files, commit
    for kill_at in range(1, renames + 1):
        for when in ("before", "after"):
            target = tmp_path / f"killed-{kill_at}-{when}"
            shutil.copytree(base, target, symlinks=True)
            env = {**os.environ, VERSION: "2"}
            done = subprocess.run([sys.executable, "-c", DRIVER, str(project), str(target), dialect, str(kill_at),
                                   when], env=env, capture_output=True, text=True)
            assert done.returncode == -signal.SIGKILL, done.stderr
            # back to the old version (files the killed run did not reach are not rewritten), then forward
            for version, expected in (("1", base), ("2", reference)):
                report = compile_into(project, target, dialect, version)
                assert report.kept == (), (kill_at, when, report.kept)
                assert temp_files(target) == [], (kill_at, when)
                assert {k: v for k, v in files(target).items() if not k.startswith(".oac/")} == {
                    k: v for k, v in files(expected).items() if not k.startswith(".oac/")}, (kill_at, when)
            clean = compile_into(project, target, dialect, "2", clean=True)
            assert clean.kept == () and files(target) == {}, (kill_at, when)  # nothing disowned: all taken back


def test_a_full_disk_part_way_disowns_nothing(project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import errno

    target = tmp_path / "target"
    compile_into(project, target, "claude", "1")
    real_write = os.write
    state = "1"
    for fail_at in range(1, 20):  # the journal, then each file in turn
        calls = [0]

        def write(fd: int, data: bytes) -> int:
            calls[0] += 1
            if calls[0] == fail_at:
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
            return real_write(fd, data)

        state = "2" if state == "1" else "1"
        monkeypatch.setattr(os, "write", write)
        try:
            compile_into(project, target, "claude", state)
        except OacError as exc:
            assert "No space left on device" in str(exc)
        else:
            assert fail_at > 4  # past the last write of this compile
            break
        finally:
            monkeypatch.undo()
        assert temp_files(target) == []
        report = compile_into(project, target, "claude", state)
        assert report.kept == () and temp_files(target) == []
    assert compile_into(project, target, "claude", clean=True).kept == () and files(target) == {}


def test_the_journal_is_saved_before_any_file_changes(project: Path, tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "target"
    compile_into(project, target, "opencode", "1")
    seen: list[dict] = []
    real = fsio.write_file

    def spy(root: Path, rel: str, data: bytes, **kwargs: object) -> None:
        if rel != MANIFEST_PATH:
            seen.append(json.loads((target / MANIFEST_PATH).read_text())["dialects"]["opencode"])
        real(root, rel, data, **kwargs)

    monkeypatch.setattr(fsio, "write_file", spy)
    report = compile_into(project, target, "opencode", "2")
    assert report.written and len(seen) == len(report.written)
    for record, rel in zip(seen, report.written):
        assert record["pending"][rel] == digest_bytes(files(target)[rel])  # its new bytes, recorded first
    assert "pending" not in json.loads((target / MANIFEST_PATH).read_text())["dialects"]["opencode"]


# concurrent compiles -------------------------------------------------------------------------------------------------
@pytest.mark.slow
def test_concurrent_compiles_of_two_dialects_lose_nothing(project: Path, tmp_path: Path) -> None:
    target = tmp_path / "target"
    rounds = 20
    procs = [python(LOOPER, str(project), str(target), dialect, str(rounds), stdin=subprocess.PIPE)
             for dialect in ("opencode", "claude")]
    for proc in procs:
        assert proc.stdin is not None
        proc.stdin.write("go\n")
        proc.stdin.flush()
    for proc in procs:
        _, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
    manifest = load_manifest(target)
    assert sorted(manifest.dialects) == ["claude", "opencode"]
    on_disk = files(target)
    for record in manifest.dialects.values():
        assert record.pending == {}
        for rel, digest in record.files.items():
            assert digest_bytes(on_disk[rel]) == digest, rel
    assert temp_files(target) == [] and not (target / ".oac" / "compile.lock").exists()
    for dialect in ("opencode", "claude"):  # the last round wrote version 2
        again = compile_into(project, target, dialect, "2")
        assert again.kept == () and again.written == ()


# fresh clone and --adopt ---------------------------------------------------------------------------------------------
def test_a_fresh_clone_adopts_files_whose_bytes_are_ours(project: Path, tmp_path: Path) -> None:
    target = tmp_path / "target"
    first = compile_into(project, target, "claude", "1")
    shutil.rmtree(target / ".oac")  # a clone: .oac/ is git-ignored
    again = compile_into(project, target, "claude", "1")
    assert again.kept == () and sorted(again.unchanged) == sorted(first.written)
    changed = compile_into(project, target, "claude", "2")  # ours again: updated, not kept
    assert changed.kept == () and ".claude/agents/primary.md" in changed.written


def test_a_fresh_clone_behind_the_config_needs_adopt_and_says_so(project: Path, tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    target = project / "out"
    compile_into(project, target, "opencode", "1")
    shutil.rmtree(target / ".oac")
    (target / "mine.md").write_text("user file")
    monkeypatch.chdir(project)
    monkeypatch.setenv(VERSION, "2")
    runner = CliRunner()
    plain = runner.invoke(oac, ["compile", "agents:registry", "--config", "prod", "--target", "out"])
    assert plain.exit_code == 1 and f"({NOT_OURS})" in plain.output  # stale: never a silent exit 0
    assert "--adopt" in plain.output  # the hint: how to take them back
    assert (target / ".opencode/agents/primary.md").read_bytes() != compiled(project, "opencode", "2").files[0].content
    adopted = runner.invoke(oac, ["compile", "agents:registry", "--config", "prod", "--target", "out", "--adopt"])
    assert adopted.exit_code == 0, adopted.output
    assert "wrote out/.opencode/agents/primary.md (taken over: --adopt)" in adopted.output
    after = runner.invoke(oac, ["compile", "agents:registry", "--config", "prod", "--target", "out"])
    assert "written=0" in after.output and "kept=0" in after.output
    assert (target / "mine.md").read_text() == "user file"


def test_user_edits_stay_unless_adopt_and_symlinks_stay_even_then(project: Path, tmp_path: Path) -> None:
    target = tmp_path / "target"
    compile_into(project, target, "pi", "1")
    (target / ".pi/agents/helper.md").write_text("hand-tuned\n")
    (target / "real.md").write_text("mine\n")
    (target / ".pi/agents/primary.md").unlink()
    (target / ".pi/agents/primary.md").symlink_to(target / "real.md")
    report = compile_into(project, target, "pi", "2")
    assert {(k.path, k.reason) for k in report.kept} == {(".pi/agents/helper.md", CHANGED),
                                                         (".pi/agents/primary.md", LINK)}
    assert (target / ".pi/agents/helper.md").read_text() == "hand-tuned\n"
    adopted = compile_into(project, target, "pi", "2", adopt=True)
    assert adopted.adopted == (".pi/agents/helper.md",)
    assert (target / ".pi/agents/helper.md").read_text() != "hand-tuned\n"
    assert (target / ".pi/agents/primary.md").is_symlink() and (target / "real.md").read_text() == "mine\n"


def test_a_dangling_symlink_at_a_compiled_path_is_left_alone(project: Path, tmp_path: Path) -> None:
    target = tmp_path / "target"
    (target / ".opencode/agents").mkdir(parents=True)
    (target / ".opencode/agents/primary.md").symlink_to("../../nowhere.md")
    report = compile_into(project, target, "opencode")
    assert [(k.path, k.reason) for k in report.kept] == [(".opencode/agents/primary.md", LINK)]
    assert os.readlink(target / ".opencode/agents/primary.md") == "../../nowhere.md"
    assert not (target / "nowhere.md").exists()
    compile_into(project, target, "opencode", clean=True)
    assert os.readlink(target / ".opencode/agents/primary.md") == "../../nowhere.md"


# nothing outside the target ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("field", ["files", "dirs", "pending", "settings", "blocks"])
@pytest.mark.parametrize("path", ["../outside", "/abs/outside", ".oac/x", "a/../../outside", "."])
def test_a_damaged_manifest_path_is_refused_on_load(field: str, path: str, project: Path, tmp_path: Path) -> None:
    target, outside = tmp_path / "target", tmp_path / "outside"
    outside.mkdir()
    value = {"files": {path: "d"}, "pending": {path: "d"}, "dirs": [path],
             "settings": {path: {"rules": {}}}, "blocks": {path: {"marker": "m"}}}[field]
    (target / ".oac").mkdir(parents=True)
    (target / MANIFEST_PATH).write_text(json.dumps({"version": 1, "dialects": {"opencode": {field: value}}}))
    with pytest.raises(OacError, match="manifest.json is damaged") as info:
        compile_into(project, target, "opencode", clean=True)
    assert "\n" not in str(info.value)
    assert outside.is_dir() and sorted(p.name for p in tmp_path.iterdir()) == ["outside", "project", "target"]


def test_pruning_never_removes_a_directory_through_a_symlinked_parent(project: Path, tmp_path: Path) -> None:
    target, outside = tmp_path / "target", tmp_path / "outside"
    compile_into(project, target, "claude")
    shutil.rmtree(target / ".claude")
    (outside / "agents").mkdir(parents=True)  # empty directories outside, where .claude now points
    (target / ".claude").symlink_to(outside)
    with pytest.raises(OacError, match=r"\.claude is a symbolic link"):
        compile_into(project, target, "claude", clean=True)
    assert (outside / "agents").is_dir()
    # a manifest that lists only the directories: pruning walks without following the link and keeps them
    manifest = json.loads((target / MANIFEST_PATH).read_text())
    manifest["dialects"]["claude"] = {"dirs": [".claude", ".claude/agents"]}
    (target / MANIFEST_PATH).write_text(json.dumps(manifest))
    compile_into(project, target, "claude", clean=True)
    assert (outside / "agents").is_dir() and (target / ".claude").is_symlink()


def test_a_symlinked_oac_dir_is_refused(project: Path, tmp_path: Path) -> None:
    target, outside = tmp_path / "target", tmp_path / "outside"
    outside.mkdir()
    target.mkdir()
    (target / ".oac").symlink_to(outside)
    with pytest.raises(OacError, match=r"\.oac is a symbolic link"):
        compile_into(project, target, "opencode")
    assert list(outside.iterdir()) == [] and sorted(files(target)) == []


def test_a_device_node_or_fifo_at_a_compiled_path_is_one_line(project: Path, tmp_path: Path) -> None:
    target = tmp_path / "target"
    (target / ".opencode/agents").mkdir(parents=True)
    os.mkfifo(target / ".opencode/agents/primary.md")
    with pytest.raises(OacError, match=r"cannot write \.opencode/agents/primary\.md: a FIFO is in the way"):
        compile_into(project, target, "opencode")
    assert stat.S_ISFIFO(os.lstat(target / ".opencode/agents/primary.md").st_mode)


# modes ---------------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize(("mask", "plain", "script"), [(0o022, 0o644, 0o755), (0o002, 0o664, 0o775),
                                                       (0o077, 0o600, 0o700)])
def test_compiled_files_follow_the_umask_and_secrets_are_0600(
    mask: int, plain: int, script: int, project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OAC_WRITES_SECRET", "1")
    old = os.umask(mask)
    try:
        compile_into(project, tmp_path / "t", "claude")
    finally:
        os.umask(old)
    mode = lambda rel: stat.S_IMODE(os.stat(tmp_path / "t" / rel).st_mode)  # noqa: E731
    assert b"s3cr3t" in (tmp_path / "t/.claude/agents/primary.md").read_bytes()
    assert mode(".claude/agents/primary.md") == 0o600  # holds the MCP server's token
    assert mode(".claude/agents/helper.md") == plain and mode(".claude/settings.json") == plain
    assert mode("scripts/run.py") == script and mode(".oac/manifest.json") == plain


def test_a_users_settings_file_keeps_its_mode(project: Path, tmp_path: Path) -> None:
    settings = tmp_path / "t/.claude/settings.json"
    settings.parent.mkdir(parents=True)
    settings.write_text('{"model": "opus"}')
    os.chmod(settings, 0o640)
    compile_into(project, tmp_path / "t", "claude")
    assert "grep v1 *" in settings.read_text() and stat.S_IMODE(settings.stat().st_mode) == 0o640


# names used in paths are validated where they enter ------------------------------------------------------------------
@pytest.mark.parametrize(("old", "new", "message"), [
    ('CompilationConfig(name="prod"', 'CompilationConfig(name="/abs"', "unsafe compilation config name '/abs'"),
    ('CompilationConfig(name="prod"', 'CompilationConfig(name="../.."', "unsafe compilation config name '../..'"),
    ('target_file_path="scripts/run.py"', 'target_file_path="."', "unsafe script target of tool 'run' '.'"),
    ('target_file_path="scripts/run.py"', 'target_file_path="scripts/"', "unsafe script target of tool 'run'"),
])
def test_names_used_in_paths_are_rejected_where_they_enter(old: str, new: str, message: str, project: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    agents = project / "agents.py"
    agents.write_text(agents.read_text().replace(old, new).replace('config name=', 'config name='))
    config = "prod" if "CompilationConfig" not in old else new.split('"')[1]
    monkeypatch.chdir(project)
    done = subprocess.run([str(Path(sys.executable).with_name("oac")), "compile", "agents:registry", "--config",
                           config, "--target", "out"], capture_output=True, text=True, cwd=project)
    assert done.returncode == 2 and message in done.stderr and done.stderr.count("\n") == 1, done.stderr
    assert "Traceback" not in done.stderr and not (project / "out").exists()


@pytest.mark.parametrize("planted", [".oac/compile.lock", ".oac/manifest.json"])
def test_a_symlink_planted_at_the_lock_or_manifest_is_refused(planted: str, project: Path, tmp_path: Path) -> None:
    target, victim = tmp_path / "target", tmp_path / "victim.txt"
    victim.write_text("precious\n")
    (target / ".oac").mkdir(parents=True)
    (target / planted).symlink_to(victim)
    with pytest.raises(OacError, match="symbolic link") as info:
        compile_into(project, target, "opencode")
    assert "\n" not in str(info.value)
    assert victim.read_text() == "precious\n" and (target / planted).is_symlink()
    assert sorted(files(target)) == []
