"""`[tool.oac]` is found upwards from the current directory and read by every command; `doit test` writes the
JUnit file it names; JUnit stays parseable whatever the evidence holds."""

import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

from cli_project import DOIT, oac, one_line, quickstart

from open_agent_compiler.tasks.settings import build_options, find_project

TABLE = '[tool.oac]\nfactory = "agents:registry"\nconfig = "prod"\n'


def test_pyproject_is_found_upwards_and_its_folder_is_the_project_root(tmp_path: Path) -> None:
    root = quickstart(tmp_path)
    (root / "pyproject.toml").write_text(TABLE + 'results = "reports/results.jsonl"\n')
    deep = root / "src" / "deeper"
    deep.mkdir(parents=True)
    done = oac(deep, "test")
    assert done.returncode == 0, done.stdout + done.stderr
    assert (root / "reports" / "results.jsonl").is_file() and (root / ".oac").is_dir()
    assert not (deep / ".oac").exists() and not (deep / "reports").exists()
    # a relative path typed on the command line stays relative to where it was typed
    again = oac(deep, "test", "--results", "here.jsonl", "--force")
    assert again.returncode == 0 and (deep / "here.jsonl").is_file()


def test_the_lookup_stops_at_the_repository_root(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(TABLE)  # outside the repository: not this project's
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "sub").mkdir()
    assert find_project(repo / "sub").root == repo / "sub" and find_project(repo / "sub").values == {}
    assert find_project(tmp_path / "elsewhere").root == tmp_path  # no repository in between: found
    one_line(oac(repo / "sub", "test"), "no factory given")


def test_a_pyproject_without_oac_table_is_passed_over(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / "pyproject.toml").write_text(TABLE)
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "pyproject.toml").write_text('[project]\nname = "pkg"\n')
    found = find_project(tmp_path / "pkg")
    assert found.root == tmp_path and found.values["factory"] == "agents:registry"
    options = build_options(tmp_path / "pkg", {})
    assert options.root == tmp_path and options.factory == "agents:registry"


def test_compile_and_info_read_the_table(tmp_path: Path) -> None:
    root = quickstart(tmp_path)
    (root / "pyproject.toml").write_text(TABLE + 'target = "compiled"\ndialect = ["claude", "opencode"]\n')
    (root / "sub").mkdir()
    done = oac(root / "sub", "compile")
    assert done.returncode == 0, done.stdout + done.stderr
    assert (root / "compiled" / ".claude" / "agents" / "primary.md").is_file()
    assert (root / "compiled" / ".opencode" / "agents" / "primary.md").is_file()
    assert done.stdout.splitlines()[-1].startswith(f"oac compile: opencode -> {root / 'compiled'}: written=")
    # the command line wins over the table; its --target is relative to the current directory
    only = oac(root / "sub", "compile", "--dialect", "codex", "--target", "here")
    assert only.returncode == 0 and (root / "sub" / "here" / ".codex").is_dir()
    info = oac(root / "sub", "info")
    assert info.returncode == 0 and info.stdout.startswith("configs:\n  prod: template tpl")
    (root / "pyproject.toml").write_text(TABLE + 'target = 7\n')
    one_line(oac(root, "compile"), "[tool.oac] target in", "must be a string")
    (root / "pyproject.toml").write_text(TABLE + 'dialect = "vim"\n')
    one_line(oac(root, "compile", "--target", "x"), "[tool.oac] dialect in", "unknown dialect 'vim'")


def test_without_any_table_the_seed_defaults_hold(tmp_path: Path) -> None:
    root = quickstart(tmp_path)
    one_line(oac(root, "compile", "agents:registry", "--config", "prod"), "no target given")
    assert oac(root, "info").stdout.startswith("dialects:\n")


def test_doit_test_writes_the_junit_of_the_table(tmp_path: Path) -> None:
    root = quickstart(tmp_path)
    (root / "dodo.py").write_text("from open_agent_compiler.tasks import DOIT_CONFIG, task_test  # noqa: F401\n")
    (root / "pyproject.toml").write_text(TABLE + 'junit = "reports/junit.xml"\n')
    done = subprocess.run([DOIT, "test"], cwd=root, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    suite = ET.parse(root / "reports" / "junit.xml").getroot()
    assert suite.get("tests") == "5" and suite.get("failures") == "0"


BAD_MOCK = '''
def boom(payload):
    raise ValueError("red \\x1b[31m nul \\x00 bell \\x07 vt \\x0b end \\ufffe")
'''


def test_junit_stays_parseable_with_control_characters_in_evidence(tmp_path: Path) -> None:
    root = quickstart(tmp_path)
    (root / "badmock.py").write_text(BAD_MOCK)
    agents = root / "agents.py"
    agents.write_text(agents.read_text().replace(
        'mock=MockResponse(kind="fixed",\n                          fixed_output={"text": "DEFAULT", "from": "tool.mock"}),',
        'mock=MockResponse(kind="callable", callable_spec="badmock:boom"),'))
    done = oac(root, "test", "agents:registry", "--config", "prod", "--junit", "junit.xml")
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stdout + done.stderr
    failure = ET.parse(root / "junit.xml").getroot().find("testcase/failure")
    assert failure is not None
    assert "red \\x1b[31m nul \\x00 bell \\x07 vt \\x0b end \\ufffe" in failure.get("message", "")


def test_doit_test_with_an_unusable_state_folder_is_one_line(tmp_path: Path) -> None:
    root = quickstart(tmp_path)
    (root / "dodo.py").write_text("from open_agent_compiler.tasks import DOIT_CONFIG, task_test  # noqa: F401\n")
    (root / "pyproject.toml").write_text(TABLE)
    (root / ".oac").write_text("a file\n")
    done = subprocess.run([DOIT, "test"], cwd=root, capture_output=True, text=True, timeout=120)
    assert done.returncode != 0 and "Traceback" not in done.stdout + done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and ".oac" in lines[0] and "a file is where oac needs a directory" in lines[0], lines
    assert (root / ".oac").read_text() == "a file\n"
