"""`permission_present/absent` with `permission_key="bash"` judge a `bash_pattern` under bash (as the public
package does), and the `bash` key alone means "some bash is allowed" — the same in all four dialects."""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from open_agent_compiler.compiler.dialects import DIALECTS
from open_agent_compiler.model.core.capabilities import Capabilities
from open_agent_compiler.model.core.evaluator import EvaluationContext
from open_agent_compiler.testing.evaluation import PermissionAbsentEvaluator, PermissionPresentEvaluator

RELAY = Path(__file__).resolve().parent / "registries" / "relay"
OAC = str(Path(sys.executable).with_name("oac"))


@pytest.mark.parametrize("dialect", sorted(DIALECTS))
def test_the_seed_examples_bash_tests_pass_in_every_dialect(tmp_path: Path, dialect: str) -> None:
    shutil.copytree(RELAY, tmp_path / "relay", ignore=shutil.ignore_patterns("__pycache__", ".oac"))
    done = subprocess.run([OAC, "test", "agents:registry", "--config", "prod", "--dialect", dialect, "-v",
                           "--results", str(tmp_path / "r.jsonl")], cwd=tmp_path / "relay", capture_output=True,
                          text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "pass 'no-wipe'" in done.stdout and "pass 'relay-may-run-bash'" in done.stdout
    assert "oac test: discovered=5 passed=5 failed=0 skipped=0 not_runnable=0" in done.stdout


def judge(evaluator: PermissionAbsentEvaluator | PermissionPresentEvaluator, capabilities: Capabilities) -> bool:
    return evaluator.evaluate(EvaluationContext(permissions=capabilities)).passed


@pytest.mark.parametrize("listed", [{"bash": "allow"}, {}, {"bash": "deny"}])
def test_the_pattern_under_bash_decides_whatever_the_read_back_lists_for_the_key(listed: dict) -> None:
    # OpenCode's read-back lists a `bash` key; Claude's, Pi's and Codex's do not. The verdict must not depend on it.
    caps = Capabilities(agent="a", dialect="opencode", bash={"*": "deny", "python3 x.py *": "allow"},
                        permissions=listed)
    assert judge(PermissionAbsentEvaluator(permission_key="bash", bash_pattern="rm -rf *"), caps)
    assert not judge(PermissionPresentEvaluator(permission_key="bash", bash_pattern="rm -rf *"), caps)
    assert judge(PermissionPresentEvaluator(permission_key="bash", bash_pattern="python3 x.py *"), caps)
    assert judge(PermissionPresentEvaluator(permission_key="bash"), caps)
    assert not judge(PermissionAbsentEvaluator(permission_key="bash"), caps)
    no_bash = caps.model_copy(update={"bash": {"*": "deny"}})
    assert not judge(PermissionPresentEvaluator(permission_key="bash"), no_bash)
    assert judge(PermissionAbsentEvaluator(permission_key="bash"), no_bash)


def test_another_key_next_to_a_pattern_is_checked_too() -> None:
    caps = Capabilities(agent="a", dialect="opencode", bash={"*": "allow"}, permissions={"edit": "deny"})
    assert not judge(PermissionPresentEvaluator(permission_key="edit", bash_pattern="ls"), caps)
    assert judge(PermissionPresentEvaluator(permission_key="bash", bash_pattern="ls"), caps)
