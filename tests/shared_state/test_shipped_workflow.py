"""The one shipped CI workflow (`oac init` writes it; examples/ci/github-actions.yml is the same with the example's
config): its shell steps run here as GitHub's runners would run them — three shards in three fresh checkouts, each
job with its own PostgreSQL service container (here: a fresh database of the job's own on a real server), the
merge job's state merge, results merge and report — over two pipelines, the second one restoring the history (and
the green state in it) the first one saved."""

import os
import re
import shutil
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

import yaml
from engine_project import OAC, REPO, SUMMARY, summary_line
from pg_server import PASSWORD

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


def service(job: dict, pg, name: str) -> dict[str, str]:
    """The job's PostgreSQL service container as this machine's server stands in for it: a database of the job's
    own, created empty (a container lives only as long as its job)."""
    postgres = job["services"]["postgres"]
    assert postgres["image"].startswith("postgres:") and postgres["ports"] == ["5432:5432"]
    user, database = postgres["env"]["POSTGRES_USER"], postgres["env"]["POSTGRES_DB"]
    assert job["env"]["OAC_STATE_URL"] == f"postgresql://{user}@127.0.0.1:5432/{database}"
    return {"OAC_STATE_URL": pg.url(pg.fresh_database(name)), "PGPASSWORD": PASSWORD}


def pipeline(flow: dict, checkouts: list[Path], merger: Path, context: dict[str, str], pg) -> subprocess.CompletedProcess:
    """One workflow run: each shard in a fresh checkout (history restored from the merge job's last save), then the
    merge job over the shards' uploaded results."""
    test_job, merge_job = flow["jobs"]["test"], flow["jobs"]["merge"]
    shards = test_job["strategy"]["matrix"]["shard"]
    base = {k: expand(v, context) for k, v in flow["env"].items()}
    run_id = context["github.run_id"]
    runner = {"GITHUB_ACTIONS": "true", "GITHUB_RUN_ID": run_id, "GITHUB_RUN_ATTEMPT": "1", "GITHUB_SHA": "5" * 40}
    shutil.rmtree(merger / "results", ignore_errors=True)
    (merger / "results").mkdir(parents=True)
    for shard, checkout in zip(shards, checkouts):
        for made in ("history", "results", ".oac"):  # a fresh runner: nothing but the checkout and the cache
            shutil.rmtree(checkout / made, ignore_errors=True)
        if (merger / "history").is_dir():  # actions/cache/restore
            shutil.copytree(merger / "history", checkout / "history")
        env = {**base, **runner, **{k: expand(v, {**context, "matrix.shard": str(shard)})
                                    for k, v in test_job["env"].items()},
               **service(test_job, pg, f"{pg.database}_{run_id}_{shard}")}
        done = run(step(test_job, "Run shard"), checkout, env)
        assert done.returncode in (0, 1), done.stdout + done.stderr
        assert "::error" not in done.stdout  # annotations come once, from the merge
        for produced in (checkout / "results").iterdir():  # upload-artifact, then download-artifact
            shutil.copy(produced, merger / "results" / produced.name)
    env = {**base, **runner, **merge_job["env"], **service(merge_job, pg, f"{pg.database}_{run_id}_merge")}
    state = run(step(merge_job, "Merge shard state"), merger, env)
    assert state.returncode == 0, state.stdout + state.stderr
    merged = run(step(merge_job, "Merge shard results"), merger, env)
    report = run(step(merge_job, "Report"), merger, env)
    assert report.returncode == 0, report.stdout + report.stderr
    assert (merger / "results" / "report.html").stat().st_size > 1000
    return merged


def test_two_pipelines_of_the_shipped_workflow_on_a_real_database(pg, tmp_path: Path) -> None:
    flow = yaml.safe_load(EXAMPLE.read_text())
    checkouts = []
    for name in ("runner-1", "runner-2", "runner-3", "merge-job"):
        shutil.copytree(REPO / "examples" / "quickstart", tmp_path / name,
                        ignore=shutil.ignore_patterns(".oac", "__pycache__"))
        (tmp_path / name / "pyproject.toml").write_text('[tool.oac]\nproject = "quickstart"\n')
        checkouts.append(tmp_path / name)
        text = (tmp_path / name / "agents.py").read_text()
        (tmp_path / name / "agents.py").write_text(text.replace('expected="tool.mock")', 'expected="nope")'))
    merger = checkouts.pop()
    context = {"vars.OAC_REQUIREMENT": "unused here", "github.run_id": "101"}

    first = pipeline(flow, checkouts, merger, context, pg)
    assert first.returncode == 1 and summary_line(first.stdout) == SUMMARY.format(5, 3, 1, 0, 1)
    line = next(n for n, text in enumerate((checkouts[0] / "agents.py").read_text().splitlines(), 1)
                if 'ToolTest(name="echo-default-mock"' in text)
    assert [x for x in first.stdout.splitlines() if x.startswith("::error")] == [
        f"::error file=agents.py,line={line},title=oac test tool%3Aecho-tool%3A%3Aecho-default-mock::"
        "tool:echo-tool::echo-default-mock: equals: 'from': expected \"nope\", found \"tool.mock\" (differs)"]
    suite = ET.parse(merger / "results" / "junit.xml").getroot()
    assert (suite.get("tests"), suite.get("failures")) == ("5", "1")

    assert (merger / "history" / "state.jsonl").is_file()
    unsharded = tmp_path / "unsharded"  # the pipeline's verdict is that of one unsharded run of the project
    shutil.copytree(checkouts[0], unsharded, ignore=shutil.ignore_patterns(".oac", "history", "results"))
    alone = run(f"{OAC} test agents:registry --config prod", unsharded, {})
    assert alone.returncode == 1 and summary_line(alone.stdout) == summary_line(first.stdout)

    context["github.run_id"] = "102"  # the next push: fresh runners and databases; the shards restore the saved
    # history, whose green state lets them skip what the first pipeline proved
    second = pipeline(flow, checkouts, merger, context, pg)
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
