"""The sentence docs/testing.md and docs/shared-state.md both hold about a revert: "pass → change → fail → revert"
runs the test again with local state only (its one green row was replaced by the failure), and finds it green
with shared state (outcomes are kept per key: the pass under the old key still stands)."""

from engine_project import REPO, SUMMARY, summary_line
from shared_project import make

SENTENCE = ("With local state only, `pass → change → fail → revert` runs the test again; with shared state the "
            "revert finds the pass still recorded under its old key and skips the test")


def test_the_docs_say_it_in_both_places() -> None:
    for doc in ("docs/testing.md", "docs/shared-state.md"):
        assert SENTENCE in " ".join((REPO / doc).read_text().split()), doc


def cycle(project, env: dict[str, str]) -> str:
    """pass, then an edit that fails beta's test, then the edit reverted: the last run's summary line."""
    assert summary_line(project.test(env=env).stdout) == SUMMARY.format(4, 4, 0, 0, 0)
    project.edit("agents.py", "expected=True),))]", "expected=False),))]")
    project.test(env=env, code=1)
    project.edit("agents.py", "expected=False),))]", "expected=True),))]")
    return summary_line(project.test(env=env).stdout)


def test_a_revert_runs_again_with_local_state(tmp_path) -> None:
    assert cycle(make(tmp_path / "local"), {}) == SUMMARY.format(4, 3, 0, 1, 0)  # the edit touched the 3 tool tests


def test_a_revert_is_green_with_shared_state(pg, tmp_path) -> None:
    assert cycle(make(tmp_path / "shared"), pg.env(pg.database)) == SUMMARY.format(4, 0, 0, 4, 0)
