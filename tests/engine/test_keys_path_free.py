"""No path of the checkout in any key (issue 32 §12): two byte-identical copies of one project at two paths share
every key — capability, tool (mock and real handler), agent under the scripted invoker, and the judge's."""

import shutil
import sqlite3
from pathlib import Path

from engine_project import REPO, Project
from open_agent_compiler.testing.judges import judge_key, load_judge
from open_agent_compiler.testing.invokers.select import invoker_key, load_invoker

JUDGE = '''
import json
from open_agent_compiler.testing.judges import StubJudge

with open("judge_rules.json") as f:
    RULES = json.load(f)


def make():
    return StubJudge(default=RULES)
'''


def copies(tmp_path: Path) -> list[Path]:
    roots = [tmp_path / "a" / "quickstart", tmp_path / "b" / "deeper" / "checkout"]
    for root in roots:
        shutil.copytree(REPO / "examples" / "quickstart", root, ignore=shutil.ignore_patterns(".oac", "__pycache__"))
        (root / "judge_mod.py").write_text(JUDGE)
        (root / "judge_rules.json").write_text('{"pass": true, "score": 1.0}')
    return roots


def green_keys(root: Path) -> dict[str, tuple[str, str]]:
    db = sqlite3.connect(root / ".oac" / "doit-state.sqlite3")
    try:
        return {task: (key, parts) for task, key, parts in
                db.execute("select task_id, green_key, parts from doit where green_key is not null")}
    finally:
        db.close()


def test_every_key_kind_is_equal_in_two_checkouts_at_two_paths(tmp_path: Path) -> None:
    keys = []
    for root in copies(tmp_path):
        Project(root).oac("test", "agents:registry", "--config", "prod", "--invoker", "scripted", check_code=0)
        keys.append(green_keys(root))
    kinds = {task.split(":")[2] for task in keys[0]}
    assert {"agent", "tool", "capability"} <= kinds, sorted(keys[0])  # every kind of test keyed
    assert keys[0] == keys[1]


def test_the_invoker_and_judge_key_parts_are_equal_at_two_paths(tmp_path: Path, monkeypatch) -> None:
    found = []
    for root in copies(tmp_path):
        monkeypatch.chdir(root)  # as `oac test` runs: in the project
        judge = load_judge("judge_mod:make", root)
        invoker = load_invoker("scripted", root=root, factory="agents:registry")
        found.append((judge_key("judge_mod:make", judge, root), invoker_key("scripted", invoker, root)))
    assert found[0] == found[1]
    assert all(str(tmp_path) not in part for part in found[0] if part)
