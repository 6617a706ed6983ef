"""examples/ci/github-actions.yml, run locally: its shard and merge steps' commands, as the matrix would run them
(tests/shared_state/test_shipped_workflow.py runs it with shared state on PostgreSQL)."""

import os
import subprocess
from pathlib import Path

import yaml

from engine_project import OAC, REPO, SUMMARY, Project, summary_line

WORKFLOW = REPO / "examples" / "ci" / "github-actions.yml"


def run_step(script: str, root: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    path = f"{Path(OAC).parent}{os.pathsep}{os.environ['PATH']}"  # `oac` as the workflow's install provides it
    return subprocess.run(["bash", "-e", "-c", script], cwd=root, capture_output=True, text=True, timeout=300,
                          env={**os.environ, **env, "PATH": path})


def test_the_workflow_commands_shard_junit_annotate_and_merge(quickstart: Project) -> None:
    flow = yaml.safe_load(WORKFLOW.read_text())
    shared = {key: str(value) for key, value in flow["env"].items()}
    test_job, merge_job = flow["jobs"]["test"], flow["jobs"]["merge"]
    shards = test_job["strategy"]["matrix"]["shard"]
    assert len(shards) == int(shared["SHARDS"])
    shard_script = next(step["run"] for step in test_job["steps"] if step.get("name") == "Run shard")
    merge_script = next(step["run"] for step in merge_job["steps"] if step.get("name") == "Merge shard results")
    quickstart.edit("agents.py", 'expected="tool.mock")', 'expected="nope")')  # one failure, to see it annotated
    for shard in shards:
        done = run_step(shard_script, quickstart.root, {**shared, "SHARD": str(shard), "GITHUB_ACTIONS": "true"})
        assert done.returncode in (0, 1), done.stdout + done.stderr
        assert (quickstart.root / "results" / f"junit-{shard}.xml").is_file()
        assert "::error" not in done.stdout  # annotations come once, from the merge
    merged = run_step(merge_script, quickstart.root, {**shared, "GITHUB_ACTIONS": "true"})
    assert merged.returncode == 1 and summary_line(merged.stdout) == SUMMARY.format(5, 3, 1, 0, 1)
    line = next(n for n, text in enumerate((quickstart.root / "agents.py").read_text().splitlines(), 1)
                if 'ToolTest(name="echo-default-mock"' in text)  # the annotation sits on its definition
    assert (f"::error file=agents.py,line={line},title=oac test tool%3Aecho-tool%3A%3Aecho-default-mock::"
            "tool:echo-tool::echo-default-mock: equals: 'from': expected \"nope\"") in merged.stdout
    assert (quickstart.root / "history" / "all.jsonl").is_file()
    # the same as one unsharded run of the same project
    fresh = Project(quickstart.root.parent / "unsharded")
    subprocess.run(["cp", "-r", str(quickstart.root), str(fresh.root)], check=True)
    subprocess.run(["rm", "-rf", str(fresh.root / ".oac")], check=True)
    assert summary_line(fresh.test(code=1).stdout) == summary_line(merged.stdout)
