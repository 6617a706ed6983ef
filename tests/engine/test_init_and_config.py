"""`oac init` scaffolds a project that passes `oac test` and `doit test` at once; the first-hour config snags:
a `dialect` list in [tool.oac], `oac compile` with no arguments, `--check`, `--invoker-script`, `--judge http`
with a [tool.oac.judge] table."""

import json
import os
import subprocess
import sys
from pathlib import Path

from open_agent_compiler.tasks.settings import build_options

BIN = Path(sys.executable).parent
OAC = str(BIN / "oac")


def run(cwd: Path, *argv: str, timeout: float = 180) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PATH=f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}")
    return subprocess.run(list(argv), cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)


def summary(out: str) -> str:
    return [line for line in out.splitlines() if line.startswith("oac test:")][-1]


def init(tmp_path: Path) -> Path:
    made = run(tmp_path, OAC, "init", "demo")
    assert made.returncode == 0, made.stderr
    return tmp_path / "demo"


def test_init_then_oac_test_and_doit_test_pass(tmp_path: Path) -> None:
    demo = init(tmp_path)
    assert sorted(p.relative_to(demo).as_posix() for p in demo.rglob("*") if p.is_file()) == [
        ".github/workflows/agents.yml", "agents.py", "agents_scripts.py", "dodo.py", "mocks.py", "pyproject.toml",
        "tools/word_count.py"]
    tested = run(demo, OAC, "test", "-v")
    assert tested.returncode == 0, tested.stdout + tested.stderr
    assert summary(tested.stdout) == "oac test: discovered=5 passed=5 failed=0 skipped=0 not_runnable=0"
    kinds = {r["test_kind"] for r in map(json.loads, (demo / ".oac/test_results.jsonl").read_text().splitlines())}
    assert kinds == {"capability", "tool", "agent"}
    doit = run(demo, str(BIN / "doit"), "test")
    assert doit.returncode == 0 and summary(doit.stdout).endswith("skipped=5 not_runnable=0"), doit.stdout
    fresh = run(demo, str(BIN / "doit"), "-a", "test")  # forced: every test really runs under doit too
    assert fresh.returncode == 0 and summary(fresh.stdout).startswith("oac test: discovered=5 passed=5"), fresh.stdout


def test_init_refuses_to_overwrite_anything(tmp_path: Path) -> None:
    (tmp_path / "demo").mkdir()
    (tmp_path / "demo" / "pyproject.toml").write_text("[project]\nname = 'mine'\n")
    refused = run(tmp_path, OAC, "init", "demo")
    assert refused.returncode == 2 and refused.stderr.count("\n") == 1, refused.stderr
    assert "demo/pyproject.toml exists" in refused.stderr and "nothing was written" in refused.stderr
    assert [p.name for p in (tmp_path / "demo").iterdir()] == ["pyproject.toml"]
    assert (tmp_path / "demo" / "pyproject.toml").read_text() == "[project]\nname = 'mine'\n"


def test_compile_without_arguments_uses_the_compile_entries_and_check_says_what_is_stale(tmp_path: Path) -> None:
    demo = init(tmp_path)
    stale = run(demo, OAC, "compile", "--check")
    assert stale.returncode == 1, stale.stdout + stale.stderr
    assert "would write " + str(demo / "build/opencode/scripts/word_count.py") in stale.stdout
    assert "oac compile --check: 2 file(s) would change or differ" in stale.stderr
    assert run(demo, OAC, "compile", "--dry-run").returncode == 0  # informative, never failing
    assert not (demo / "build").exists()
    done = run(demo, OAC, "compile")
    assert done.returncode == 0 and (demo / "build/opencode/.opencode/agents/primary.md").is_file(), done.stderr
    assert run(demo, OAC, "compile", "--check").returncode == 0
    (demo / "build/opencode/scripts/word_count.py").write_text("# edited\n")
    edited = run(demo, OAC, "compile", "--check")
    assert edited.returncode == 1 and "word_count.py" in edited.stdout


def test_a_dialect_list_in_the_table_tests_its_first_dialect(tmp_path: Path) -> None:
    demo = init(tmp_path)
    text = (demo / "pyproject.toml").read_text().replace('config = "dev"\ninvoker',
                                                          'config = "dev"\ndialect = ["claude", "codex"]\ninvoker', 1)
    (demo / "pyproject.toml").write_text(text)
    tested = run(demo, OAC, "test")
    assert tested.returncode == 0, tested.stdout + tested.stderr
    records = [json.loads(line) for line in (demo / ".oac/test_results.jsonl").read_text().splitlines()]
    assert {r["dialect"] for r in records if r["test_kind"] != "tool"} == {"claude"}
    assert build_options(demo, {"dialect": "pi"}).dialect == "pi"


def test_invoker_script_flag(tmp_path: Path) -> None:
    demo = init(tmp_path)
    (demo / "agents_scripts.py").rename(demo / "other_scripts.py")
    missing = run(demo, OAC, "test", "--kind", "agent")
    assert missing.returncode == 2 and "no model script" in missing.stderr
    flagged = run(demo, OAC, "test", "--kind", "agent", "--invoker-script", "other_scripts:SCRIPTS")
    assert flagged.returncode == 0 and summary(flagged.stdout).endswith("passed=1 failed=0 skipped=0 not_runnable=0")


def test_judge_http_uses_the_judge_table(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[tool.oac]\nfactory = "a:b"\nconfig = "c"\n[tool.oac.judge]\n'
                                             'base_url = "http://127.0.0.1:9/v1"\nmodel = "j"\n')
    assert build_options(tmp_path, {"judge": "http"}).judge == {"base_url": "http://127.0.0.1:9/v1", "model": "j"}
    assert build_options(tmp_path, {"judge": "pkg:make"}).judge == "pkg:make"
