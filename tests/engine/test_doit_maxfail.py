"""`doit test -x` / `doit test --maxfail N` (the `test` group's own parameters) and `maxfail` in [tool.oac] stop a
user's `doit test` after that many failing tests, as `oac test -x` does: doit's runner stops dispatching."""

import subprocess
import sys
from pathlib import Path

from engine_project import Project, summary_line

DOIT = str(Path(sys.executable).with_name("doit"))
DODO = "from open_agent_compiler.tasks import DOIT_CONFIG, task_test  # noqa: F401\n"
PYPROJECT = '[tool.oac]\nfactory = "agents:registry"\nconfig = "prod"\n'


def doit(project: Project, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([DOIT, *args], cwd=project.root, capture_output=True, text=True, timeout=180)


def two_failures(quickstart: Project) -> Project:
    """The quickstart with its first capability test and its first tool test failing."""
    quickstart.write("dodo.py", DODO)
    quickstart.write("pyproject.toml", PYPROJECT)
    quickstart.edit("agents.py", 'expected="tool.mock")', 'expected="nope")')
    quickstart.edit("agents.py", 'must_have_bash_patterns=("uv run scripts/echo.py *",)',
                    'must_have_bash_patterns=("nope *",)')
    return quickstart


def fails(output: str) -> list[str]:
    return [line for line in output.splitlines() if line.startswith("  FAIL ")]


def test_doit_test_x_and_maxfail_stop_after_that_many_failures(quickstart: Project) -> None:
    proj = two_failures(quickstart)
    everything = doit(proj, "test")
    assert everything.returncode == 2 and len(fails(everything.stdout)) == 2  # no stop asked: all five ran
    assert summary_line(everything.stdout).startswith("oac test: discovered=5 ")
    before = len(proj.records())
    first = doit(proj, "test", "-x")
    assert first.returncode == 1, first.stdout + first.stderr
    assert len(fails(first.stdout)) == 1 and "oac: stopped after 1 failure (--maxfail 1)" in first.stdout
    assert len(proj.records()) - before < 5  # the tests after the first failure were not run
    two = doit(proj, "test", "--maxfail", "2")
    assert two.returncode == 1 and len(fails(two.stdout)) == 2
    assert "oac: stopped after 2 failures (--maxfail 2)" in two.stdout


def test_maxfail_from_the_table_and_under_doit_n(quickstart: Project) -> None:
    proj = two_failures(quickstart)
    proj.write("pyproject.toml", PYPROJECT + "maxfail = 1\n")
    table = doit(proj, "test")
    assert table.returncode == 1 and len(fails(table.stdout)) == 1, table.stdout + table.stderr
    assert "oac: stopped after 1 failure (--maxfail 1)" in table.stdout
    spread = doit(proj, "-n", "2", "test", "-x")  # doit's process runner stops dispatching too
    assert spread.returncode == 1 and "oac: stopped after 1 failure (--maxfail 1)" in spread.stdout, \
        spread.stdout + spread.stderr


def test_doit_test_takes_what_ci_gives_oac_test_as_command_line_variables(quickstart: Project) -> None:
    """`doit test shard=K/N junit=PATH pipeline=ID`: the shards cover the tests once, each writes its JUnit."""
    import xml.etree.ElementTree as ET

    proj = two_failures(quickstart)
    seen: list[str] = []
    for shard in (1, 2, 3):
        done = doit(proj, "test", f"shard={shard}/3", f"junit=junit-{shard}.xml", "pipeline=p7")
        assert done.returncode in (0, 1, 2), done.stdout + done.stderr
        suite = ET.parse(proj.root / f"junit-{shard}.xml").getroot()
        seen += [case.get("name", "") for case in suite.iter("testcase")]
    assert sorted(seen) == sorted(r["test_name"] for r in proj.records()) and len(seen) == 5
    assert {r["pipeline"] for r in proj.records()} == {"p7"}
    assert {r["shard"] for r in proj.records()} <= {"1/3", "2/3", "3/3"} and len({r["shard"] for r in proj.records()}) > 1
