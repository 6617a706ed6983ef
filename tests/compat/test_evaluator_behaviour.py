"""Every evaluator kind, on the same inputs, gives the same pass/score/skipped and the same `details` keys as the
public package 1.16.5 (one subprocess of its interpreter evaluates the whole batch of evaluator_cases.py).
Each case listed in DIFFERENT is a deliberate difference (docs/compatibility.md); a listed case that no longer
differs fails too, so the list stays true."""

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).parent))

import evaluator_cases  # noqa: E402
from _anchor import anchor_python  # noqa: E402

DIFFERENT: dict[str, str] = {
    "absent-ask": "`ask` lets the agent run the command once the user approves: permission_absent counts it as"
    " present",
    "absent-bash-no-bash": "a block without bash rules denies bash; ours reports that as the value, theirs no"
    " details",
    "present-bash-fallback": "a pattern absent from the block is decided by the rules that match it (here `*`),"
    " as the harness decides",
    "present-bash-key-all-denied": "a bash block whose every rule denies grants no bash",
    "facts-no-output": "no output is skipped, not searched as the text 'None'",
    "substring-no-output": "no output is skipped, not searched as the text 'None'",
}


@pytest.fixture(scope="module")
def anchor_outcomes() -> dict[str, dict[str, Any]]:
    python = anchor_python()
    done = subprocess.run([str(python), evaluator_cases.__file__], capture_output=True, text=True, timeout=120,
                          check=False, cwd=Path(__file__).parent)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout)


def test_every_kind_is_covered() -> None:
    from open_agent_compiler.testing.evaluation import EVALUATORS

    assert {case[1] for case in evaluator_cases.CASES} == set(EVALUATORS)


def test_same_results_as_the_public_package(anchor_outcomes: dict[str, dict[str, Any]]) -> None:
    ours = evaluator_cases.outcomes()
    assert set(ours) == set(anchor_outcomes)
    unlisted = {case: (anchor_outcomes[case], ours[case]) for case in ours
                if ours[case] != anchor_outcomes[case] and case not in DIFFERENT}
    assert not unlisted, f"differs from 1.16.5 (theirs, ours): {unlisted}"
    stale = [case for case in DIFFERENT if ours[case] == anchor_outcomes[case]]
    assert not stale, f"listed as different but the same now: {stale}"
