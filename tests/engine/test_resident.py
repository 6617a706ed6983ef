"""`tasks.resident`: which saves the resident plan of `oac test --watch` re-keys in place and which load afresh,
and which tests a save re-keys and hands to doit (the whole-watcher equivalence is `test_watch.py`'s)."""

from pathlib import Path

import pytest

from open_agent_compiler.tasks import build_options
from open_agent_compiler.tasks.resident import ResidentPlan, literal_prefix, not_resident
from test_watch import Tree


@pytest.mark.parametrize(("pattern", "prefix"), [("fixtures/*.txt", "fixtures"), ("**/*.json", ""),
                                                 ("data/in[12]/x.csv", "data"), ("a/b/c.txt", "a/b/c.txt"),
                                                 ("a/?/c", "a")])
def test_a_glob_matches_only_below_its_literal_prefix(pattern: str, prefix: str) -> None:
    assert literal_prefix(pattern) == prefix


def test_options_whose_runs_depend_on_more_than_keys_are_not_kept(tmp_path: Path) -> None:
    base = {"factory": "agents:registry", "config": "prod"}
    assert not_resident(build_options(tmp_path, base)) is None
    for extra in ({"force": True}, {"last_failed": True}, {"shard": "1/2"}, {"repeat": 2}, {"junit": "j.xml"},
                  {"invoker": "scripted"}, {"state": "postgresql://u@127.0.0.1/db"}):
        assert not_resident(build_options(tmp_path, {**base, **extra})) is not None, extra


def test_a_save_is_re_keyed_in_place_only_where_the_keys_cover_it(tmp_path: Path, monkeypatch) -> None:
    tree = Tree(tmp_path / "p")
    monkeypatch.chdir(tree.root)
    resident = ResidentPlan(build_options(tree.root, {"factory": "agents:registry", "config": "prod"}))
    assert resident.cycle(None) == 0
    names = {test_id: case.name for test_id, case in resident.plan.by_id.items()}
    # the recorded imports of the first run (the mock data its callable read) re-key their tests, as a fresh plan
    assert {names[t] for t in resident.rekey([])} == {"mocked-value", "moduled-value"}
    assert resident.due() == set()
    # what loading imported or read, the settings, a folder, code no key covers: a fresh load
    for path in ("agents.py", "data.py", "prompt.txt", "pyproject.toml", "fixtures", "helpers.py"):
        assert resident.fresh_reason([path]) is not None, path
    # data only tests read, a glob's match, a module only a test imports, an unread file: re-keyed in place
    for path in ("mockdata/m.json", "fixtures/f7.txt", "mockmod.py", "NOTES.txt"):
        assert resident.fresh_reason([path]) is None, path
    assert {names[t] for t in resident.affected(["mockdata/m.json"])} == {"mocked-value"}
    assert {names[t] for t in resident.affected(["fixtures/f7.txt"])} == {"globbed-value"}
    assert {names[t] for t in resident.affected(["mockmod.py"])} == {"moduled-value"}
    assert resident.affected(["NOTES.txt", "elsewhere/f7.txt"]) == set()
    # a save: exactly the tests it changed are re-keyed and due
    tree.apply(("mock", "y", 1))
    tree.apply(("fixture", 7))
    changed = ["mockdata/m.json", "fixtures/f7.txt"]
    assert {names[t] for t in resident.rekey(changed)} == {"mocked-value", "globbed-value"}
    assert {names[t] for t in resident.due()} == {"mocked-value", "globbed-value"}
    assert resident.cycle(changed) == 1  # mocked now fails (it expects "x"); it stays due, globbed is green
    assert {names[t] for t in resident.due()} == {"mocked-value"}
