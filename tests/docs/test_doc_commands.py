"""Every command the docs mean to be run is run, in a scratch copy of the repository, and none of them changes a
committed file.

Meant to be run: fenced blocks tagged `bash`/`sh`/`shell`, and untagged transcripts whose lines start with `$ `
(their stated output lines must appear in what the command prints). The blocks of one file run in order, in one
shell (`set -e`), from the folder the file's commands are written for. Lines on the short allow-list below are
not run; each says why. Prose saying a command "ends with `oac test: ...`" is checked against the output.
"""

import hashlib
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
FENCE = re.compile(r"^```([\w-]*)\n(.*?)^```", re.S | re.M)
RUNNABLE = ("bash", "sh", "shell")
STATED = re.compile(r"ends with\s+`(oac test: [^`]+)`")

# file → folder its commands are written for (default: the repository root); "" = a fresh empty folder
START = {"docs/agent-tests.md": "examples/quickstart", "docs/tutorial.md": "",
         "examples/multi_agent/README.md": "examples/multi_agent"}

ALLOW_LIST: list[tuple[str, str, str]] = [
    ("README.md", r"^python3 -m venv \.venv .*pytest", "runs this very test suite"),
    ("docs/agent-tests.md", r"--invoker (opencode|claude|codex|pi)\b", "needs the real harness CLIs "
     "(tests/agents/test_harness_runs.py runs them when installed)"),
    ("docs/agent-tests.md", r"mypkg\.invokers:make", "a placeholder for your own invoker module"),
    ("docs/performance.md", r"^(\w+=\S+ )?doit bench|benchmarks/run\.py", "benchmarks: minutes to hours, and they "
     "install the public package"),
]


def doc_files() -> list[str]:
    found = ["README.md", *sorted(p.relative_to(REPO).as_posix() for p in (REPO / "docs").rglob("*.md")),
             *sorted(p.relative_to(REPO).as_posix() for p in (REPO / "examples").glob("*/README.md"))]
    return [name for name in found if (REPO / name).is_file()]


def allowed(name: str, line: str) -> str | None:
    for file, pattern, reason in ALLOW_LIST:
        if file == name and re.search(pattern, line):
            return reason
    return None


def script_of(name: str) -> tuple[str, int]:
    """(the bash script running the file's commands, how many commands it runs)."""
    lines = ["set -euo pipefail"]
    count = 0
    for lang, body in FENCE.findall((REPO / name).read_text()):
        rows = body.splitlines()
        transcript = not lang and any(row.startswith("$ ") for row in rows)
        if lang not in RUNNABLE and not transcript:
            continue
        index = 0
        while index < len(rows):
            row = rows[index]
            index += 1
            command = row[2:] if transcript and row.startswith("$ ") else row if not transcript else None
            if command is None or not command.strip() or command.lstrip().startswith("#"):
                continue
            if allowed(name, command):
                lines.append(f": allow-listed: {command!r}")
                continue
            count += 1
            if transcript:  # the stated output must appear in what the command prints
                expected = []
                while index < len(rows) and not rows[index].startswith("$ "):
                    expected.append(rows[index])
                    index += 1
                out = f'"$DOC_OUT/{count}"'
                lines.append(f"{command} > {out}; cat {out}")
                lines += [f"grep -qxF -- {shellquote(text)} {out} || {{ echo 'missing output: {text}' >&2; exit 1; }}"
                          for text in expected if text.strip()]
            else:
                lines.append(command)
    return "\n".join(lines) + "\n", count


def shellquote(text: str) -> str:
    return "'" + text.replace("'", "'\"'\"'") + "'"


def committed(root: Path) -> dict[str, str]:
    names = subprocess.run(["git", "ls-files", "-z"], cwd=REPO, capture_output=True, text=True, check=True).stdout
    return {name: hashlib.sha256((root / name).read_bytes()).hexdigest() if (root / name).is_file() else "missing"
            for name in names.split("\0") if name}


@pytest.fixture(scope="module")
def scratch(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("docs") / "repo"
    shutil.copytree(REPO, root, symlinks=True, ignore=shutil.ignore_patterns(
        ".git", ".venv", ".oac", "build", "__pycache__", "node_modules", "*.egg-info", ".harnesses"))
    return root


def test_the_allow_list_is_short_and_every_entry_is_used() -> None:
    assert len(ALLOW_LIST) <= 5
    for file, pattern, _ in ALLOW_LIST:
        text = "\n".join(body for lang, body in FENCE.findall((REPO / file).read_text()))
        assert re.search(pattern, text, re.M), (file, pattern)


@pytest.mark.parametrize("name", doc_files())
def test_doc_commands_run_and_change_no_committed_file(name: str, scratch: Path, tmp_path: Path) -> None:
    script, count = script_of(name)
    before = committed(scratch)
    start = tmp_path / "fresh" if START.get(name) == "" else scratch / START.get(name, ".")
    start.mkdir(exist_ok=True)
    home = tmp_path / "home"
    home.mkdir()
    env = {"PATH": f"{BIN}{os.pathsep}/usr/bin:/bin", "HOME": str(home), "LANG": "C.UTF-8",
           "DOC_OUT": str(tmp_path), "TMPDIR": str(tmp_path),
           # how this machine installs packages (README's first command runs pip), as the reader's shell has it
           **{k: v for k, v in os.environ.items() if k.startswith("PIP_") or k.lower().endswith("_proxy")}}
    done = subprocess.run(["bash", "-c", script], cwd=start, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, f"{name}:\n{script}\n--- stdout\n{done.stdout[-3000:]}\n--- stderr\n{done.stderr[-3000:]}"
    for stated in STATED.findall((REPO / name).read_text()):  # "ends with `oac test: ...`" in the prose
        assert stated in done.stdout.splitlines(), f"{name} says a command ends with {stated!r}:\n{done.stdout}"
    changed = [path for path, digest in committed(scratch).items() if before[path] != digest]
    assert not changed, f"{name}: its commands changed committed files: {changed}"


def test_the_docs_test_notices_a_damaging_command(scratch: Path, tmp_path: Path) -> None:
    """The damage check is real: a command truncating a committed file is caught."""
    before = committed(scratch)
    subprocess.run(["bash", "-c", "missing-interpreter > tests/compat/anchor_schema.json || true"], cwd=scratch,
                   capture_output=True)
    after = committed(scratch)
    assert [path for path in after if after[path] != before[path]] == ["tests/compat/anchor_schema.json"]
    shutil.copyfile(REPO / "tests/compat/anchor_schema.json", scratch / "tests/compat/anchor_schema.json")
