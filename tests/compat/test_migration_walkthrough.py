"""The migration walk-through of docs/compatibility.md, run: the registries under
tests/compat/registries/walkthrough/ (ours, written in the public package's documented style) give the same
`oac test` summary line and exit code, the same compiled agents in every dialect and the same OpenCode models
under open-agent-compiler 1.16.5 and under oac. The public package comes from tests/compat/_anchor.py (skipped
with the reason where it cannot be installed, a failure when `CI` is set)."""

import json
import re
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from open_agent_compiler.compiler.dialects import DIALECTS
from open_agent_compiler.testing.artifacts import list_agent_artifacts, load_agent_artifact

from _anchor import anchor_venv

WALKTHROUGH = Path(__file__).resolve().parent / "registries" / "walkthrough"
OURS = Path(sys.executable).with_name("oac")
# (module, the summary line both packages print); every step's tests pass on both
STEPS = [
    ("archive", "oac test: discovered=5 passed=5 failed=0 skipped=0 not_runnable=0"),
    ("interview", "oac test: discovered=5 passed=3 failed=0 skipped=0 not_runnable=2"),
    ("research", "oac test: discovered=2 passed=2 failed=0 skipped=0 not_runnable=0"),
    ("release", "oac test: discovered=2 passed=2 failed=0 skipped=0 not_runnable=0"),
    ("crew", "oac test: discovered=3 passed=3 failed=0 skipped=0 not_runnable=0"),
    ("fleet", "oac test: discovered=1 passed=1 failed=0 skipped=0 not_runnable=0"),
    ("tuning", "oac test: discovered=1 passed=1 failed=0 skipped=0 not_runnable=0"),
]
MODULES = ["greeter", *(module for module, _ in STEPS)]


@pytest.fixture(scope="module")
def public_oac() -> Path:
    return anchor_venv() / "bin/oac"


def project(tmp_path: Path, name: str) -> Path:
    root = tmp_path / name
    shutil.copytree(WALKTHROUGH, root, ignore=shutil.ignore_patterns("__pycache__", ".oac", "build"))
    return root


def run_both(public_oac: Path, tmp_path: Path, *args: str) -> list[subprocess.CompletedProcess[str]]:
    """The same command line under both packages, side by side, each in its own copy of the walk-through."""
    running = []
    for oac, name in ((public_oac, "theirs"), (OURS, "ours")):
        root = project(tmp_path, name)
        running.append(subprocess.Popen([str(oac), *args], cwd=root, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                        text=True, env={"PATH": "/usr/bin:/bin", "HOME": str(root),
                                                        "PYTHONDONTWRITEBYTECODE": "1"}))
    results = []
    for process in running:
        out, err = process.communicate(timeout=300)
        results.append(subprocess.CompletedProcess(process.args, process.returncode, out, err))
    return results


def last_line(result: subprocess.CompletedProcess[str]) -> str:
    lines = result.stdout.strip().splitlines()
    return lines[-1] if lines else ""


@pytest.mark.parametrize(("module", "summary"), STEPS)
def test_oac_test_gives_the_same_summary_and_exit_code(tmp_path: Path, public_oac: Path, module: str,
                                                        summary: str) -> None:
    args = ("test", f"{module}:registry", "--config", "default")
    theirs, ours = run_both(public_oac, tmp_path, *args)
    assert (last_line(theirs), theirs.returncode) == (summary, 0), theirs.stdout + theirs.stderr
    assert (last_line(ours), ours.returncode) == (summary, 0), ours.stdout + ours.stderr


# One process per package compiles every step for every dialect through CompileScript (the same call on both).
COMPILE_ALL = """
import sys
from pathlib import Path
sys.path.insert(0, ".")
from open_agent_compiler.compiler.script import CompileScript
for module in sys.argv[1:]:
    for dialect in ("opencode", "claude", "pi", "codex"):
        CompileScript(target=Path("build", module, dialect), factory_spec=module + ":registry", config="default",
                      dialect=dialect).run()
"""


def test_every_dialect_compiles_the_same_agents(tmp_path: Path, public_oac: Path) -> None:
    roots = {"theirs": project(tmp_path, "theirs"), "ours": project(tmp_path, "ours")}
    pythons = {"theirs": public_oac.with_name("python"), "ours": Path(sys.executable)}
    running = {name: subprocess.Popen([str(pythons[name]), "-c", COMPILE_ALL, *MODULES], cwd=roots[name],
                                      stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                      env={"PATH": "/usr/bin:/bin", "HOME": str(roots[name])})
               for name in roots}
    for name, process in running.items():
        _, err = process.communicate(timeout=600)
        assert process.returncode == 0, f"{name}: {err}"
    for module in MODULES:
        for dialect in DIALECTS:
            theirs, ours = (roots[name] / "build" / module / dialect for name in ("theirs", "ours"))
            names = list_agent_artifacts(theirs, dialect)
            assert names and list_agent_artifacts(ours, dialect) == names, (module, dialect)
            if dialect == "opencode":  # models in OpenCode's own form
                assert ([load_agent_artifact(ours, n, dialect).model for n in names]
                        == [load_agent_artifact(theirs, n, dialect).model for n in names]), module


def test_the_variant_build_script_writes_the_same_agents(tmp_path: Path, public_oac: Path) -> None:
    outputs = []
    for python, name in ((public_oac.with_name("python"), "theirs"), (Path(sys.executable), "ours")):
        root = project(tmp_path, name)
        result = subprocess.run([str(python), "build.py", "build"], cwd=root, capture_output=True, text=True,
                                timeout=300, env={"PATH": "/usr/bin:/bin", "HOME": str(root)})
        assert result.returncode == 0, result.stderr
        outputs.append((result.stdout.splitlines(),
                        {n: load_agent_artifact(root / "build", n, "opencode").model
                         for n in list_agent_artifacts(root / "build", "opencode")}))
    assert outputs[0] == outputs[1]
    assert outputs[1][1] == {"primary-deep": "anthropic/claude-sonnet-4-5",
                             "primary-fast": "anthropic/claude-haiku-4-5"}


def test_a_config_without_tests_gives_the_same_summary_and_exit_code(tmp_path: Path, public_oac: Path) -> None:
    theirs, ours = run_both(public_oac, tmp_path, "test", "greeter:registry", "--config", "default")
    assert (last_line(theirs), theirs.returncode) == (
        "oac test: discovered=0 passed=0 failed=0 skipped=0 not_runnable=0", 0)
    assert (last_line(ours), ours.returncode) == (last_line(theirs), theirs.returncode)


# --- Tool scripts run as commands (what the real harness runs), on both packages side by side. ---
TOOL_SCRIPTS = Path(__file__).resolve().parent / "tool_scripts"
BOUND = '{"notes": {"kind": "sqlite", "config": {"path": "%s"}}}'
MOCK_ONLY = '{"notes": {"kind": "sqlite", "config": {}, "mock_only": true}}'
# (script, arguments, extra environment); {db} and {mock_file} are filled in per run
TOOL_COMMANDS = [
    ("notes_tool.py", ["--topic", "db"], {}),
    ("notes_tool.py", ["--topic", "db", "--limit", "1"], {"OAC_RESOURCES_JSON": BOUND}),
    ("notes_tool.py", ["--topic", "db"], {"OAC_RESOURCES_JSON": BOUND}),
    ("notes_tool.py", ["--topic", "db"], {"OAC_RESOURCES_JSON": MOCK_ONLY}),
    ("notes_tool.py", ["--topic", "db"], {"OAC_MOCK_RESPONSE": '{"notes": ["env"], "source": "env"}'}),
    ("notes_tool.py", ["--topic", "db", "--mock", '{"notes": ["flag"], "source": "flag"}'],
     {"OAC_MOCK_RESPONSE": '{"notes": ["env"], "source": "env"}'}),
    ("notes_tool.py", ["--topic", "db", "--mock", "{mock_file}"], {}),
    ("notes_tool.py", ["--topic", "db", "--mock-callable", "notes_tool:canned", "--mock", '{"x": 1}'], {}),
    ("notes_tool.py", ["--topic", "db", "--mock", '[1, 2]'], {}),
    ("notes_tool.py", ["--topic", "db", "--limit", "many"], {}),  # bad input: exit 2
    ("notes_tool.py", ["--topic", "db", "--limit", "many"], {"OAC_MOCK_RESPONSE": '{"notes": []}'}),
    ("notes_tool.py", ["--topic", "db", "--nonsense", "1"], {}),
    ("quiet_tool.py", ["--topic", "canned"], {}),
    ("quiet_tool.py", ["--topic", "plain"], {"OAC_RESOURCES_JSON": MOCK_ONLY}),
    ("quiet_tool.py", ["--topic", "canned", "--mock", '{"notes": ["flag"], "source": "flag"}'], {}),
]


def tool_command_results(python: Path, root: Path) -> list[tuple[int, str, str]]:
    shutil.copytree(TOOL_SCRIPTS, root, ignore=shutil.ignore_patterns("__pycache__"))
    db = root / "notes.db"
    with sqlite3.connect(db) as connection:
        connection.execute("create table notes (id integer primary key, topic text, body text)")
        connection.executemany("insert into notes (topic, body) values (?, ?)",
                               [("db", "first"), ("db", "second"), ("web", "third")])
    (root / "mock.json").write_text('{"notes": ["from a file"], "source": "file"}')
    running = []
    for script, args, extra in TOOL_COMMANDS:
        words = [w.replace("{mock_file}", str(root / "mock.json")) for w in args]
        env = {"PATH": "/usr/bin:/bin", "HOME": str(root), "PYTHONDONTWRITEBYTECODE": "1", "PYTHONPATH": str(root)}
        env.update({k: v.replace("%s", str(db)) for k, v in extra.items()})
        running.append(subprocess.Popen([str(python), script, *words], cwd=root, env=env, text=True,
                                        stdout=subprocess.PIPE, stderr=subprocess.PIPE))
    results = []
    for process in running:
        out, err = process.communicate(timeout=300)
        results.append((process.returncode, out, err))
    return results


def test_tool_scripts_answer_as_the_public_package_does(tmp_path: Path, public_oac: Path) -> None:
    theirs = tool_command_results(public_oac.with_name("python"), tmp_path / "theirs")
    ours = tool_command_results(Path(sys.executable), tmp_path / "ours")
    for case, (their, our) in zip(TOOL_COMMANDS, zip(theirs, ours)):
        assert their[0] in (0, 2), (case, their)
        assert our[0] == their[0], (case, their, our)
        if their[0] == 0:
            assert json.loads(our[1]) == json.loads(their[1]), case
        else:  # bad input: nothing on stdout, one line naming the culprit on stderr (1.16.5 prints its usage too)
            assert our[1] == "" and len(our[2].splitlines()) == 1, (case, our)
    answers = [json.loads(out) for code, out, _ in ours if code == 0]
    assert {"notes": ["first"], "source": "notes"} in answers  # the bound resource reached execute()
    assert {"notes": ["callable saw NotesIn db"], "source": "callable"} in answers


def verdicts(result: subprocess.CompletedProcess[str]) -> dict[str, str]:
    """`oac test -v`'s per-test lines (`  pass 'name'` / `  FAIL 'name': ...`) as {name: pass/FAIL}."""
    found = re.findall(r"^\s+(pass|FAIL) '([^']+)'", result.stdout, re.MULTILINE)
    return {name: verdict for verdict, name in found}


def test_guard_tests_on_built_in_tools_decide_as_the_public_package_does(tmp_path: Path, public_oac: Path) -> None:
    """A `must_not_have_tools` guard on a granted built-in fails, `must_have_tools` with built-in names passes;
    on ours in every dialect, since a guard means the same in every harness."""
    args = ("test", "guards:registry", "--config", "default", "-v")
    theirs, ours = run_both(public_oac, tmp_path, *args)
    expected = {"editor-has-the-built-ins": "pass", "editor-never-edits": "FAIL", "editor-never-writes": "FAIL",
                "helper-may-read": "pass", "helper-never-edits": "pass"}
    assert (verdicts(theirs), theirs.returncode) == (expected, 1), theirs.stdout
    assert (verdicts(ours), ours.returncode) == (expected, 1), ours.stdout
    root = project(tmp_path, "dialects")
    for dialect in DIALECTS:
        result = subprocess.run([str(OURS), *args, "--dialect", dialect], cwd=root, capture_output=True, text=True,
                                timeout=300, env={"PATH": "/usr/bin:/bin", "HOME": str(root)})
        assert verdicts(result) == expected, (dialect, result.stdout, result.stderr)


def test_a_compile_over_a_build_of_the_public_package_is_never_a_silent_green(tmp_path: Path,
                                                                             public_oac: Path) -> None:
    """1.16.5 built the target; the registry then changed. 1.16.5 rebuilds it; ours refuses with one line naming
    --adopt (exit 1, nothing replaced or deleted, with or without --clean) and, with --adopt, writes the same
    agents as 1.16.5 and leaves the files it did not compile alone."""
    args = ("compile", "archive:registry", "--config", "default", "--target", "out")
    roots = {}
    for name in ("theirs", "ours"):
        root = roots[name] = project(tmp_path, name)
        made = subprocess.run([str(public_oac), *args], cwd=root, capture_output=True, text=True, timeout=300,
                              env={"PATH": "/usr/bin:/bin", "HOME": str(root)})
        assert made.returncode == 0, made.stderr
        registry = root / "archive.py"
        registry.write_text(registry.read_text().replace("Find the box, say its shelf.", "Find the box and its row."))
    built = {path.relative_to(roots["ours"]): path.read_bytes() for path in (roots["ours"] / "out").rglob("*")
             if path.is_file()}
    theirs = subprocess.run([str(public_oac), *args], cwd=roots["theirs"], capture_output=True, text=True,
                            timeout=300, env={"PATH": "/usr/bin:/bin", "HOME": str(roots["theirs"])})
    assert theirs.returncode == 0 and "its row" in (roots["theirs"] / "out/.opencode/agents/primary.md").read_text()
    for extra in ((), ("--clean",)):
        ours = subprocess.run([str(OURS), *args, *extra], cwd=roots["ours"], capture_output=True, text=True,
                              timeout=300, env={"PATH": "/usr/bin:/bin", "HOME": str(roots["ours"])})
        assert ours.returncode == 1, (extra, ours.stdout, ours.stderr)
        refusal = [line for line in ours.stderr.splitlines() if "--adopt" in line]
        assert len(refusal) == 1 and "open-agent-compiler 1.16.5" in refusal[0], ours.stderr
        assert {path: (roots["ours"] / path).read_bytes() for path in built} == built  # nothing replaced or deleted
    adopted = subprocess.run([str(OURS), *args, "--adopt"], cwd=roots["ours"], capture_output=True, text=True,
                             timeout=300, env={"PATH": "/usr/bin:/bin", "HOME": str(roots["ours"])})
    assert adopted.returncode == 0, adopted.stderr
    names = list_agent_artifacts(roots["theirs"] / "out", "opencode")
    assert list_agent_artifacts(roots["ours"] / "out", "opencode") == names
    for name in names:
        assert (load_agent_artifact(roots["ours"] / "out", name, "opencode").body.count("its row")
                == load_agent_artifact(roots["theirs"] / "out", name, "opencode").body.count("its row"))
    for path, data in built.items():  # 1.16.5's files we compile no counterpart of are still there
        if not (roots["ours"] / path).is_file():
            raise AssertionError(f"{path} was deleted")


CRITERIA = """
import json, sys
sys.path.insert(0, ".")
import tuning
from open_agent_compiler.improvement import metric_key
print(json.dumps([tuning.GOAL.model_dump(mode="json"), [metric_key(c) for c in tuning.GOAL.criteria],
                  tuning.PER_CLASS.model_dump(mode="json")["class_map"]["deep"]["model_id"]]))
"""


def test_a_registry_declaring_improvement_criteria_imports_the_same(tmp_path: Path, public_oac: Path) -> None:
    """1.16.5's examples 20 and 25 in our own words: the criteria import and read back the same on both
    packages; on ours, building the loop raises one line saying the loop is out of scope."""
    answers = []
    for python, name in ((public_oac.with_name("python"), "theirs"), (Path(sys.executable), "ours")):
        root = project(tmp_path, name)
        result = subprocess.run([str(python), "-c", CRITERIA], cwd=root, capture_output=True, text=True,
                                timeout=300, env={"PATH": "/usr/bin:/bin", "HOME": str(root)})
        assert result.returncode == 0, result.stderr
        answers.append(json.loads(result.stdout))
    assert answers[0] == answers[1]
    assert answers[1][1] == ["score_floor:by_name:answer-length", "pass_rate"]
    refused = subprocess.run([sys.executable, "-c", "import tuning; tuning.improve()"], capture_output=True,
                             text=True, timeout=300, cwd=WALKTHROUGH, env={"PATH": "/usr/bin:/bin",
                                                                          "PYTHONDONTWRITEBYTECODE": "1"})
    assert refused.returncode != 0
    assert refused.stderr.strip().splitlines()[-1].startswith(
        "open_agent_compiler.improvement.out_of_scope.OutOfScopeError: PromptPrefixMutator is part of "
        "open-agent-compiler 1.16.5's improvement loop, which oac does not run"), refused.stderr
