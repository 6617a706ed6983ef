"""`oac results` stays cheap to start: it reads the history without importing pydantic or doit (their imports were
~0.2-0.3 s of CPU of a 50,000-line summary), and the one-line error of an OS error still names its path though the
module that words it (tasks.state_paths, which imports doit) is imported only then."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from history_data import failing_evidence, record, write
from open_agent_compiler.cli.errors import one_line_errors

PROBE = """
import sys
from open_agent_compiler.cli import oac
try:
    oac.main(sys.argv[1:], prog_name="oac", standalone_mode=False)
except SystemExit:
    pass
heavy = sorted({name.split(".")[0] for name in sys.modules} & {"pydantic", "pydantic_core", "doit", "sqlite3"})
print("HEAVY", ",".join(heavy), file=sys.stderr)
"""


@pytest.mark.parametrize("fmt", ["text", "json"])
def test_oac_results_with_a_results_file_imports_no_pydantic_and_no_doit(tmp_path: Path, fmt: str) -> None:
    history = write(tmp_path / "h.jsonl", [record(0, "x:tool:a", "pass", 0.1),
                                           record(1, "x:tool:a", "fail", 0.2, evidence=failing_evidence("no"))])
    done = subprocess.run([sys.executable, "-c", PROBE, "results", "--results", str(history), "--format", fmt],
                          capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert done.stderr.splitlines()[-1] == "HEAVY sqlite3", done.stderr  # cli.errors catches sqlite3.Error
    if fmt == "json":
        assert json.loads(done.stdout)["failing"][0]["evidence"] == "answer: no"
    else:
        assert "x:tool:a" in done.stdout and "answer: no" in done.stdout


@pytest.mark.parametrize("command", [["results"], ["report"]])
def test_oac_results_and_report_in_a_project_import_no_pydantic_either(tmp_path: Path, command: list[str]) -> None:
    """Without --results the project is looked up (`tasks.project`, no pydantic): a configured results path is
    read, and the history index is kept in the project's .oac."""
    (tmp_path / "pyproject.toml").write_text('[tool.oac]\nresults = "reports/history.jsonl"\n')
    write(tmp_path / "reports" / "history.jsonl", [record(0, "x:tool:a", "fail", 0.2, evidence=failing_evidence("no"))])
    (tmp_path / "sub").mkdir()
    done = subprocess.run([sys.executable, "-c", PROBE, *command], capture_output=True, text=True, timeout=60,
                          cwd=tmp_path / "sub")
    assert done.stderr.splitlines()[-1] == "HEAVY sqlite3", done.stderr
    if command == ["results"]:
        assert "x:tool:a" in done.stdout and "answer: no" in done.stdout
    else:
        assert (tmp_path / ".oac" / "report.html").is_file()
    assert len(list((tmp_path / ".oac" / "results-index").iterdir())) == 1
    assert sorted(p.name for p in (tmp_path / "reports").iterdir()) == ["history.jsonl"]


def test_an_os_error_is_one_line_naming_its_path(capsys: pytest.CaptureFixture[str]) -> None:
    @one_line_errors
    def command() -> None:
        raise IsADirectoryError(21, "Is a directory", "/x/report.html")

    with pytest.raises(SystemExit) as exit_:
        command()
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("oac: ") and "/x/report.html" in err and "Is a directory" in err
