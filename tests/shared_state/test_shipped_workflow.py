"""The one shipped CI workflow (`oac init` writes it; examples/ci/github-actions.yml is the same with the example's
config): its shell steps run here as GitHub's runners would run them — three shards in three checkouts sharing
green state on a real PostgreSQL database, the merge job's merge and report — over two pipelines, the second one
restoring the history the first one saved."""

import os
import re
import shutil
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

import yaml
from engine_project import OAC, REPO, SUMMARY, summary_line

from open_agent_compiler.cli.scaffold_files import FILES

WORKFLOW = FILES[".github/workflows/agents.yml"]
EXAMPLE = REPO / "examples" / "ci" / "github-actions.yml"


def test_the_example_is_the_workflow_oac_init_writes() -> None:
    assert EXAMPLE.read_text() == WORKFLOW.replace("  CONFIG: dev\n", "  CONFIG: prod\n", 1)
    assert "==" not in WORKFLOW  # no pinned version of oac: how to install it is the project's (OAC_REQUIREMENT)


def expand(value: object, context: dict[str, str]) -> str:
    """A `${{ … }}` expression as GitHub fills it from `context` (vars.X, secrets.X, matrix.X, github.X)."""
    return re.sub(r"\$\{\{\s*([\w.]+)\s*\}\}", lambda m: context.get(m.group(1), ""), str(value))


def step(job: dict, name: str) -> str:
    return next(s["run"] for s in job["steps"] if s.get("name") == name)


def run(script: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    path = f"{Path(OAC).parent}{os.pathsep}{os.environ['PATH']}"  # `oac` as the install step provides it
    return subprocess.run(["bash", "-e", "-c", script], cwd=cwd, capture_output=True, text=True, timeout=300,
                          env={**{k: v for k, v in os.environ.items() if not k.startswith("GITHUB_")}, **env,
                               "PATH": path})


def test_the_install_step_without_oac_requirement_fails_with_one_line(tmp_path: Path) -> None:
    flow = yaml.safe_load(WORKFLOW)
    done = run(step(flow["jobs"]["test"], "Install oac"), tmp_path, {"OAC_REQUIREMENT": ""})
    assert done.returncode == 1
    assert done.stdout == "::error::set the repository variable OAC_REQUIREMENT to how this project installs oac\n"


def pipeline(flow: dict, checkouts: list[Path], merger: Path, context: dict[str, str]) -> subprocess.CompletedProcess:
    """One workflow run: each shard in its checkout (history restored from the merge job's last save), then the
    merge job over the shards' uploaded results."""
    test_job, merge_job = flow["jobs"]["test"], flow["jobs"]["merge"]
    shards = test_job["strategy"]["matrix"]["shard"]
    base = {k: expand(v, context) for k, v in flow["env"].items()}
    runner = {"GITHUB_ACTIONS": "true", "GITHUB_RUN_ID": context["github.run_id"], "GITHUB_RUN_ATTEMPT": "1",
              "GITHUB_SHA": "5" * 40}
    (merger / "results").mkdir(parents=True, exist_ok=True)
    for shard, checkout in zip(shards, checkouts):
        shutil.rmtree(checkout / "history", ignore_errors=True)
        shutil.rmtree(checkout / "results", ignore_errors=True)
        if (merger / "history").is_dir():  # actions/cache/restore
            shutil.copytree(merger / "history", checkout / "history")
        env = {**base, **runner, **{k: expand(v, {**context, "matrix.shard": str(shard)})
                                    for k, v in test_job["env"].items()}}
        done = run(step(test_job, "Run shard"), checkout, env)
        assert done.returncode in (0, 1), done.stdout + done.stderr
        assert "::error" not in done.stdout  # annotations come once, from the merge
        for produced in (checkout / "results").iterdir():  # upload-artifact, then download-artifact
            shutil.copy(produced, merger / "results" / produced.name)
    merged = run(step(merge_job, "Merge shard results"), merger, {**base, **runner})
    report = run(step(merge_job, "Report"), merger, {**base, **runner})
    assert report.returncode == 0, report.stdout + report.stderr
    assert (merger / "results" / "report.html").stat().st_size > 1000
    return merged


def test_two_pipelines_of_the_shipped_workflow_on_a_real_database(pg, tmp_path: Path) -> None:
    flow = yaml.safe_load(EXAMPLE.read_text())
    checkouts = []
    for name in ("runner-1", "runner-2", "runner-3"):
        shutil.copytree(REPO / "examples" / "quickstart", tmp_path / name,
                        ignore=shutil.ignore_patterns(".oac", "__pycache__"))
        (tmp_path / name / "pyproject.toml").write_text('[tool.oac]\nproject = "quickstart"\n')
        checkouts.append(tmp_path / name)
        text = (tmp_path / name / "agents.py").read_text()
        (tmp_path / name / "agents.py").write_text(text.replace('expected="tool.mock")', 'expected="nope")'))
    merger = tmp_path / "merge-job"
    context = {"vars.OAC_STATE_URL": pg.url(pg.database), "secrets.OAC_STATE_PASSWORD": pg.env()["PGPASSWORD"],
               "vars.OAC_REQUIREMENT": "unused here", "github.run_id": "101"}

    first = pipeline(flow, checkouts, merger, context)
    assert first.returncode == 1 and summary_line(first.stdout) == SUMMARY.format(5, 3, 1, 0, 1)
    line = next(n for n, text in enumerate((checkouts[0] / "agents.py").read_text().splitlines(), 1)
                if 'ToolTest(name="echo-default-mock"' in text)
    assert [x for x in first.stdout.splitlines() if x.startswith("::error")] == [
        f"::error file=agents.py,line={line},title=oac test tool%3Aecho-tool%3A%3Aecho-default-mock::"
        "tool:echo-tool::echo-default-mock: equals: 'from': expected \"nope\", found \"tool.mock\" (differs)"]
    suite = ET.parse(merger / "results" / "junit.xml").getroot()
    assert (suite.get("tests"), suite.get("failures")) == ("5", "1")

    context["github.run_id"] = "102"  # the next push: the shards restore the saved history, skip what is green
    second = pipeline(flow, checkouts, merger, context)
    assert second.returncode == 1 and summary_line(second.stdout) == SUMMARY.format(5, 0, 1, 3, 1)
    results = run(f"{OAC} results --results history/all.jsonl", merger, {}).stdout.splitlines()
    assert results[1] == "failing (1):"
    assert results[3].startswith("last pipeline github:102.1 (3 runs; shards 1/3,2/3,3/3; commit 555555555555;")
    assert "skipped green=3" in results[3] and "(saved 0.00 s)" not in results[3]


def test_init_names_the_project_and_a_folder_named_one_is_said_once(pg, tmp_path: Path) -> None:
    done = subprocess.run([OAC, "init", "my desk"], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert 'project = "my-desk"' in (tmp_path / "my desk" / "pyproject.toml").read_text()
    named = subprocess.run([OAC, "test"], cwd=tmp_path / "my desk", capture_output=True, text=True, timeout=300,
                           env={**os.environ, **pg.env(pg.database)})
    assert named.returncode == 0, named.stdout + named.stderr
    assert "project name" not in named.stderr
    text = (tmp_path / "my desk" / "pyproject.toml").read_text()
    (tmp_path / "my desk" / "pyproject.toml").write_text(text.replace('project = "my-desk"', ""))
    unnamed = subprocess.run([OAC, "test"], cwd=tmp_path / "my desk", capture_output=True, text=True, timeout=300,
                             env={**os.environ, **pg.env(pg.database)})
    assert unnamed.returncode == 0, unnamed.stdout + unnamed.stderr
    assert unnamed.stderr.count("oac: note: the shared state's project name 'my desk' is this folder's name") == 1
