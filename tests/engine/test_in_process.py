"""Two runs in one process (as a pytest plugin would do) each report only their own tests."""

import io
import os

from engine_project import SUMMARY, Project, summary_line
from open_agent_compiler.tasks import build_options, run_tests


def test_runs_in_one_process_are_independent(quickstart: Project, project: Project, monkeypatch) -> None:
    runs = ((quickstart, SUMMARY.format(5, 4, 0, 0, 1)), (quickstart, SUMMARY.format(5, 0, 0, 4, 1)),
            (project, SUMMARY.format(4, 4, 0, 0, 0)))
    for proj, expected in runs:
        monkeypatch.chdir(proj.root)
        monkeypatch.delenv("OAC_HERMETIC", raising=False)
        out = io.StringIO()
        code = run_tests(build_options(proj.root, {"factory": "agents:registry", "config": "prod"}), out)
        assert code == 0 and summary_line(out.getvalue()) == expected, out.getvalue()
    assert os.getcwd() == str(project.root)
