"""The writer: incremental, atomic, manifest-guarded; user files, settings and AGENTS.md text survive."""

import json
import os
from pathlib import Path

import pytest
from oac_builders import DIALECT_NAMES, team_registry

from open_agent_compiler.compiler.dialects import DIALECTS
from open_agent_compiler.compiler.manifest import MANIFEST_PATH
from open_agent_compiler.compiler.writer import CHANGED, NOT_OURS, WriteReport, write_output
from open_agent_compiler.errors import OacError
from open_agent_compiler.model.core.template import CompilationConfig, TemplateSlot, TemplateTree
from open_agent_compiler.model.registry import ResolvedConfig

OLD = 1_000_000_000  # a fixed old mtime: any rewrite would move it


def compile_into(resolved: ResolvedConfig, target: Path, dialect: str = "opencode", **options: bool) -> WriteReport:
    return write_output(DIALECTS[dialect].compile(resolved), target, dialect=dialect, **options)


def snapshot(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def researcher_only() -> ResolvedConfig:
    """The team without its writer slot (the lead still names writer, so use a template without subagents)."""
    reg = team_registry()
    slot = TemplateSlot(name="researcher", default_agent_id="researcher")
    reg.register_template(TemplateTree(name="solo", slots=[slot]))
    reg.create_compilation_config(CompilationConfig(name="solo", template_name="solo"))
    return reg.resolve_config("solo")


@pytest.mark.parametrize("dialect", DIALECT_NAMES)
def test_recompile_changes_nothing_and_keeps_mtimes(dialect: str, team: ResolvedConfig, tmp_path: Path) -> None:
    first = compile_into(team, tmp_path, dialect)
    assert first.written and not first.unchanged and not first.kept
    for rel in first.written:
        os.utime(tmp_path / rel, (OLD, OLD))
    before = snapshot(tmp_path)
    os.utime(tmp_path / MANIFEST_PATH, (OLD, OLD))
    second = compile_into(team, tmp_path, dialect)
    assert second.written == () and sorted(second.unchanged) == sorted(first.written)
    assert snapshot(tmp_path) == before and (tmp_path / MANIFEST_PATH).stat().st_mtime == OLD
    assert all((tmp_path / rel).stat().st_mtime == OLD for rel in first.written)


def test_manifest_records_digests_and_created_dirs(team: ResolvedConfig, tmp_path: Path) -> None:
    compile_into(team, tmp_path, "claude")
    manifest = json.loads((tmp_path / MANIFEST_PATH).read_text())
    record = manifest["dialects"]["claude"]
    assert ".claude/agents/primary.md" in record["files"]
    assert {".claude", ".claude/agents", "scripts"} <= set(record["dirs"])
    assert record["settings"][".claude/settings.json"]["created"] is True
    assert "Bash(rg *)" in record["settings"][".claude/settings.json"]["rules"]["allow"]


def test_stale_file_is_removed_but_a_changed_one_is_kept(team: ResolvedConfig, tmp_path: Path) -> None:
    compile_into(team, tmp_path, "opencode")
    (tmp_path / ".opencode/agents/primary.md").write_text("my edits\n")
    report = compile_into(researcher_only(), tmp_path, "opencode")
    assert ".opencode/agents/writer.md" in report.removed and not (tmp_path / ".opencode/agents/writer.md").exists()
    assert ".opencode/skills/summarize/SKILL.md" in report.removed
    assert any(k.path == ".opencode/agents/primary.md" and k.reason == CHANGED for k in report.kept)
    assert (tmp_path / ".opencode/agents/primary.md").read_text() == "my edits\n"
    assert not (tmp_path / ".opencode/skills").exists()  # emptied directories we created are pruned
    # once kept, the file is the user's: a later compile leaves it alone without complaint
    again = compile_into(researcher_only(), tmp_path, "opencode")
    assert again.kept == () and (tmp_path / ".opencode/agents/primary.md").read_text() == "my edits\n"


def test_a_generated_file_the_user_edited_is_not_overwritten(team: ResolvedConfig, tmp_path: Path) -> None:
    compile_into(team, tmp_path, "pi")
    path = tmp_path / ".pi/agents/writer.md"
    path.write_text("hand-tuned\n")
    report = compile_into(team, tmp_path, "pi")
    assert [(k.path, k.reason) for k in report.kept] == [(".pi/agents/writer.md", CHANGED)]
    assert path.read_text() == "hand-tuned\n"


def test_user_files_are_never_touched(team: ResolvedConfig, tmp_path: Path) -> None:
    user = {
        ".claude/settings.local.json": '{"permissions": {"allow": ["Bash(ls)"]}}\n',
        ".claude/commands/deploy.md": "deploy things\n",
        ".claude/agents/mine.md": "---\nname: mine\ndescription: mine\n---\nhand-written\n",
        ".opencode/agents/mine.md": "---\ndescription: mine\n---\nhand-written\n",
        "notes.txt": "hello\n",
    }
    for rel, text in user.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    for dialect in DIALECT_NAMES:
        compile_into(team, tmp_path, dialect)
        compile_into(researcher_only(), tmp_path, dialect)
        compile_into(team, tmp_path, dialect, clean=True)
    for rel, text in user.items():
        assert (tmp_path / rel).read_text() == text
    assert sorted(snapshot(tmp_path)) == sorted(user)  # everything of ours is gone again


def test_existing_file_at_our_path_is_kept(team: ResolvedConfig, tmp_path: Path) -> None:
    path = tmp_path / ".opencode/agents/primary.md"
    path.parent.mkdir(parents=True)
    path.write_text("someone else's agent\n")
    report = compile_into(team, tmp_path, "opencode")
    assert [(k.path, k.reason) for k in report.kept] == [(".opencode/agents/primary.md", NOT_OURS)]
    assert path.read_text() == "someone else's agent\n"
    compile_into(team, tmp_path, "opencode", clean=True)
    assert path.read_text() == "someone else's agent\n" and path.parent.is_dir()


def test_settings_merge_keeps_user_keys_and_rules(team: ResolvedConfig, tmp_path: Path) -> None:
    settings = tmp_path / ".claude/settings.json"
    settings.parent.mkdir()
    user = {"model": "opus", "permissions": {"allow": ["Bash(ls *)", "Bash(rg *)"], "deny": ["Read(.env)"]},
            "env": {"A": "1"}}
    settings.write_text(json.dumps(user))
    compile_into(team, tmp_path, "claude")
    merged = json.loads(settings.read_text())
    assert merged["model"] == "opus" and merged["env"] == {"A": "1"}
    assert merged["permissions"]["deny"] == ["Read(.env)"]
    allow = merged["permissions"]["allow"]
    assert allow[:2] == ["Bash(ls *)", "Bash(rg *)"] and "Bash(git log *)" in allow and "Edit" in allow
    # the user's own rules are not ours, even when we need the same one
    manifest = json.loads((tmp_path / MANIFEST_PATH).read_text())
    owned = manifest["dialects"]["claude"]["settings"][".claude/settings.json"]["rules"]["allow"]
    assert "Bash(rg *)" not in owned and "Bash(git log *)" in owned
    # a recompile with fewer agents replaces only our rules
    compile_into(researcher_only(), tmp_path, "claude")
    allow = json.loads(settings.read_text())["permissions"]["allow"]
    assert allow == ["Bash(ls *)", "Bash(rg *)", "Bash(git log *)", "Read"]
    # the user adds a rule meanwhile; clean takes back only ours
    data = json.loads(settings.read_text())
    data["permissions"]["ask"] = ["Bash(git push *)"]
    settings.write_text(json.dumps(data))
    compile_into(team, tmp_path, "claude", clean=True)
    expected = {**user, "permissions": {**user["permissions"], "ask": ["Bash(git push *)"]}}
    assert json.loads(settings.read_text()) == expected


def test_settings_file_we_created_goes_away_on_clean(team: ResolvedConfig, tmp_path: Path) -> None:
    compile_into(team, tmp_path, "claude")
    assert (tmp_path / ".claude/settings.json").exists()
    report = compile_into(team, tmp_path, "claude", clean=True)
    assert ".claude/settings.json" in report.removed
    assert not (tmp_path / ".claude").exists() and not (tmp_path / ".oac").exists()


def test_unchanged_settings_file_is_not_rewritten(team: ResolvedConfig, tmp_path: Path) -> None:
    settings = tmp_path / ".claude/settings.json"
    settings.parent.mkdir()
    settings.write_text('{"permissions":{"allow":["Bash(ls *)"]}}')  # compact on purpose
    compile_into(team, tmp_path, "claude")
    os.utime(settings, (OLD, OLD))
    report = compile_into(team, tmp_path, "claude")
    assert ".claude/settings.json" in report.unchanged and settings.stat().st_mtime == OLD


def test_broken_settings_json_stops_before_writing_anything(team: ResolvedConfig, tmp_path: Path) -> None:
    settings = tmp_path / ".claude/settings.json"
    settings.parent.mkdir()
    settings.write_text("{not json")
    with pytest.raises(OacError, match=r"\.claude/settings\.json is not valid JSON"):
        compile_into(team, tmp_path, "claude")
    assert snapshot(tmp_path) == {".claude/settings.json": b"{not json"}


def test_agents_md_block_leaves_user_text_alone(team: ResolvedConfig, tmp_path: Path) -> None:
    agents_md = tmp_path / "AGENTS.md"
    agents_md.write_text("# House rules\n\nUse tabs.\n")
    compile_into(team, tmp_path, "codex")
    text = agents_md.read_text()
    assert text.startswith("# House rules\n\nUse tabs.\n\n<!-- oac:begin codex-agents")
    assert "`researcher` (.codex/agents/researcher.toml)" in text
    agents_md.write_text(text + "\nMore user text.\n")
    compile_into(researcher_only(), tmp_path, "codex")
    text = agents_md.read_text()
    assert "`writer`" not in text and text.endswith("\nMore user text.\n") and text.startswith("# House rules")
    compile_into(team, tmp_path, "codex", clean=True)
    assert agents_md.read_text() == "# House rules\n\nUse tabs.\n\nMore user text.\n"


def test_agents_md_we_created_goes_away_on_clean(team: ResolvedConfig, tmp_path: Path) -> None:
    compile_into(team, tmp_path, "codex")
    assert (tmp_path / "AGENTS.md").read_text().startswith("<!-- oac:begin codex-agents")
    compile_into(team, tmp_path, "codex", clean=True)
    assert snapshot(tmp_path) == {}


def test_damaged_block_is_an_error(team: ResolvedConfig, tmp_path: Path) -> None:
    (tmp_path / "AGENTS.md").write_text("<!-- oac:end codex-agents -->\n")
    with pytest.raises(OacError, match="AGENTS.md: the oac block 'codex-agents' is damaged"):
        compile_into(team, tmp_path, "codex")


def test_shared_script_stays_while_another_dialect_still_uses_it(team: ResolvedConfig, tmp_path: Path) -> None:
    compile_into(team, tmp_path, "opencode")
    report = compile_into(team, tmp_path, "claude")
    assert "scripts/stats.py" in report.unchanged
    compile_into(team, tmp_path, "opencode", clean=True)
    assert (tmp_path / "scripts/stats.py").exists()
    compile_into(team, tmp_path, "claude", clean=True)
    assert snapshot(tmp_path) == {}


def test_script_mode_follows_the_shebang(team: ResolvedConfig, tmp_path: Path) -> None:
    compile_into(team, tmp_path, "pi")
    assert (tmp_path / "scripts/stats.py").stat().st_mode & 0o777 == 0o755
    assert (tmp_path / ".pi/agents/primary.md").stat().st_mode & 0o777 == 0o644


def test_dry_run_writes_nothing(team: ResolvedConfig, tmp_path: Path) -> None:
    target = tmp_path / "build"
    report = compile_into(team, target, "claude", dry_run=True)
    assert report.dry_run and ".claude/agents/primary.md" in report.written
    assert not target.exists()


def test_symlink_out_of_the_target_is_refused(team: ResolvedConfig, tmp_path: Path) -> None:
    outside, target = tmp_path / "outside", tmp_path / "target"
    outside.mkdir()
    target.mkdir()
    (target / ".opencode").symlink_to(outside)
    with pytest.raises(OacError, match=r"refusing to write \.opencode/agents/primary\.md: \.opencode is a symbolic"):
        compile_into(team, target, "opencode")
    assert list(outside.iterdir()) == [] and not (target / ".oac").exists()


def test_symlinked_file_inside_is_left_alone(team: ResolvedConfig, tmp_path: Path) -> None:
    (tmp_path / "real.md").write_text("mine\n")
    (tmp_path / ".pi/agents").mkdir(parents=True)
    (tmp_path / ".pi/agents/primary.md").symlink_to(tmp_path / "real.md")
    report = compile_into(team, tmp_path, "pi")
    assert any(k.path == ".pi/agents/primary.md" for k in report.kept)
    assert (tmp_path / ".pi/agents/primary.md").is_symlink() and (tmp_path / "real.md").read_text() == "mine\n"


def test_target_that_is_a_file_is_an_error(team: ResolvedConfig, tmp_path: Path) -> None:
    (tmp_path / "build").write_text("x")
    with pytest.raises(OacError, match="exists and is not a directory"):
        compile_into(team, tmp_path / "build", "opencode")


def test_damaged_manifest_is_an_error(team: ResolvedConfig, tmp_path: Path) -> None:
    (tmp_path / ".oac").mkdir()
    (tmp_path / MANIFEST_PATH).write_text("[]")
    with pytest.raises(OacError, match="manifest.json is damaged; delete it to start over"):
        compile_into(team, tmp_path, "opencode")


def test_tampered_manifest_cannot_point_outside(team: ResolvedConfig, tmp_path: Path) -> None:
    (tmp_path / ".oac").mkdir()
    (tmp_path / MANIFEST_PATH).write_text(json.dumps(
        {"version": 1, "dialects": {"opencode": {"files": {"../victim.txt": "x"}}}}))
    (tmp_path.parent / "victim.txt").write_text("keep me")
    with pytest.raises(OacError, match="unsafe output path '../victim.txt'"):
        compile_into(team, tmp_path, "opencode")
    assert (tmp_path.parent / "victim.txt").read_text() == "keep me"


@pytest.mark.parametrize("version", [0, 2])
def test_a_manifest_of_another_version_is_refused(version: int, team: ResolvedConfig, tmp_path: Path) -> None:
    (tmp_path / ".oac").mkdir()
    (tmp_path / MANIFEST_PATH).write_text(json.dumps({"version": version, "dialects": {}}))
    with pytest.raises(OacError, match=f"has version {version}; this oac reads version 1"):
        compile_into(team, tmp_path, "opencode")
    assert sorted(p.name for p in tmp_path.iterdir()) == [".oac"]


def test_target_below_a_file_is_one_error(team: ResolvedConfig, tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    with pytest.raises(OacError, match="cannot create target .*: Not a directory"):
        compile_into(team, tmp_path / "file" / "build", "opencode")


def test_symlinked_settings_file_is_left_alone(team: ResolvedConfig, tmp_path: Path) -> None:
    (tmp_path / "shared.json").write_text('{"model": "opus"}')
    (tmp_path / ".claude").mkdir()
    (tmp_path / ".claude/settings.json").symlink_to(tmp_path / "shared.json")
    report = compile_into(team, tmp_path, "claude")
    assert any(k.path == ".claude/settings.json" for k in report.kept)
    assert (tmp_path / "shared.json").read_text() == '{"model": "opus"}'


def test_a_committed_manifest_has_no_journal_and_an_old_one_still_loads(team: ResolvedConfig, tmp_path: Path) -> None:
    compile_into(team, tmp_path, "opencode")
    manifest = json.loads((tmp_path / MANIFEST_PATH).read_text())
    assert "pending" not in manifest["dialects"]["opencode"]  # the journal is gone once the compile committed
    assert sorted(p.name for p in (tmp_path / ".oac").iterdir()) == ["manifest.json"]  # no lock file, no temp
    again = compile_into(team, tmp_path, "opencode")
    assert again.written == () and again.kept == ()


def test_a_file_we_would_write_identically_is_ours_without_a_manifest(team: ResolvedConfig, tmp_path: Path) -> None:
    first = compile_into(team, tmp_path, "codex")
    (tmp_path / MANIFEST_PATH).unlink()
    report = compile_into(team, tmp_path, "codex")
    assert report.kept == () and set(report.unchanged) == set(first.written)
    compile_into(team, tmp_path, "codex", clean=True)
    assert snapshot(tmp_path) == {}  # AGENTS.md held only our block: it goes too


def test_a_settings_file_exactly_as_we_would_create_it_is_ours_without_a_manifest(team: ResolvedConfig,
                                                                                 tmp_path: Path) -> None:
    compile_into(team, tmp_path, "claude")
    (tmp_path / MANIFEST_PATH).unlink()
    assert compile_into(team, tmp_path, "claude").kept == ()
    compile_into(researcher_only(), tmp_path, "claude")  # fewer rules: the writer's are taken back
    allow = json.loads((tmp_path / ".claude/settings.json").read_text())["permissions"]["allow"]
    assert "Edit" not in allow and "Bash(rg *)" in allow
    compile_into(team, tmp_path, "claude", clean=True)
    assert snapshot(tmp_path) == {}


@pytest.mark.parametrize("dialect", DIALECT_NAMES)
def test_a_rewrite_is_a_rename_not_an_in_place_write(dialect: str, team: ResolvedConfig, tmp_path: Path) -> None:
    compile_into(team, tmp_path, dialect)
    path = tmp_path / DIALECTS[dialect].agent_path("primary")
    before = path.read_bytes()
    with open(path, "rb") as reader:  # a harness that has the old file open
        inode = os.fstat(reader.fileno()).st_ino
        reg = team_registry()
        reg.create_compilation_config(CompilationConfig(name="swap", template_name="team",
                                                        slot_overrides={"primary": "researcher"}))
        report = compile_into(reg.resolve_config("swap"), tmp_path, dialect)
        assert DIALECTS[dialect].agent_path("primary") in report.written
        assert reader.read() == before
    assert path.stat().st_ino != inode and path.read_bytes() != before
    assert not [p for p in tmp_path.rglob("*") if p.name.endswith(".oac-tmp")]
