"""The migration walk-through of docs/compatibility.md, run: the registries under
tests/compat/registries/walkthrough/ (ours, written in the public package's documented style) give the same
`oac test` summary line and exit code, the same compiled agents in every dialect and the same OpenCode models
under open-agent-compiler 1.16.5 and under oac. The public package comes from tests/compat/_anchor.py (skipped
with the reason where it cannot be installed, a failure when `CI` is set)."""

import shutil
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
