"""`--shard K/N` on the generated benchmark suite: every test in exactly one shard, adding tests moves none, and
`oac results merge` of the shards' results gives the unsharded run's summary (cold and warm)."""

import json
import shutil
import sys
from pathlib import Path

import pytest

from engine_project import REPO, Project, summary_line

sys.path.insert(0, str(REPO / "benchmarks"))
from generate import Spec, generate  # noqa: E402

from open_agent_compiler.model.factory import load_registry  # noqa: E402
from open_agent_compiler.testing.discovery import discover  # noqa: E402
from open_agent_compiler.testing.selection import shard_of  # noqa: E402


def suite(root: Path, tests: int) -> Project:
    generate(root, Spec.for_tests(tests, handler_every=0))
    (root / ".git").mkdir()
    return Project(root)


def ids_of(proj: Project, *args: str) -> list[str]:
    done = proj.oac("test", "agents:registry", "--config", "prod", "--list", "--format", "json", *args, check_code=0)
    return [entry["id"] for entry in json.loads(done.stdout)]


def test_shards_cover_every_test_once_and_adding_tests_moves_none(tmp_path: Path) -> None:
    proj = suite(tmp_path / "s", 150)
    every = ids_of(proj)
    shards = [ids_of(proj, "--shard", f"{k}/3") for k in (1, 2, 3)]
    assert sorted(sum(shards, [])) == sorted(every) and all(shards)
    suite(tmp_path / "s", 250)  # 100 tests more
    grown = [ids_of(proj, "--shard", f"{k}/3") for k in (1, 2, 3)]
    for before, after in zip(shards, grown):
        assert set(before) <= set(after)


def test_merged_shard_results_equal_the_unsharded_summary(tmp_path: Path) -> None:
    whole = suite(tmp_path / "whole", 100)
    proj = Project(tmp_path / "sharded")
    shutil.copytree(whole.root, proj.root)
    unsharded = summary_line(whole.test().stdout)
    files = []
    for k in (1, 2, 3):
        done = proj.test("--shard", f"{k}/3", "--results", f"shard{k}.jsonl", "--junit", f"junit{k}.xml")
        assert (proj.root / f"junit{k}.xml").is_file()
        files.append(f"shard{k}.jsonl")
    merged = proj.oac("results", "merge", *files, "-o", "all.jsonl", check_code=0)
    assert summary_line(merged.stdout) == unsharded
    # idempotent and order-independent
    again = proj.oac("results", "merge", *reversed(files), "all.jsonl", "-o", "again.jsonl", check_code=0)
    assert (proj.root / "again.jsonl").read_bytes() == (proj.root / "all.jsonl").read_bytes()
    assert summary_line(again.stdout) == unsharded
    # warm: every shard skips its green tests and records them, so the merge still equals the unsharded run
    warm_whole = summary_line(whole.test().stdout)
    for k in (1, 2, 3):
        proj.test("--shard", f"{k}/3", "--results", f"warm{k}.jsonl")
    warm = proj.oac("results", "merge", "warm1.jsonl", "warm2.jsonl", "warm3.jsonl", check_code=0)
    assert summary_line(warm.stdout) == warm_whole and "skipped=100" in warm_whole


def test_a_conflict_is_reported_and_counts_as_a_failure(tmp_path: Path) -> None:
    record = {"timestamp": "2026-01-01T00:00:00+00:00", "run_id": "a", "test_id": "tool:t::x", "status": "pass",
              "config": "prod", "composite_hash": "k1", "evidence": []}
    (tmp_path / "a.jsonl").write_text(json.dumps(record) + "\n")
    failed = {**record, "run_id": "b", "timestamp": "2026-01-01T00:00:01+00:00", "status": "fail",
              "evidence": [{"name": "equals", "passed": False, "evidence": "boom"}]}
    (tmp_path / "b.jsonl").write_text(json.dumps(failed) + "\n")
    done = Project(tmp_path).oac("results", "merge", "b.jsonl", "a.jsonl")
    assert done.returncode == 1
    assert "oac: conflict: tool:t::x (config prod) passed and failed under the same key k1" in done.stderr
    assert summary_line(done.stdout) == "oac test: discovered=1 passed=0 failed=1 skipped=0 not_runnable=0"
    missing = Project(tmp_path).oac("results", "merge", "nope.jsonl")
    assert missing.returncode == 2 and missing.stderr == "oac: results file nope.jsonl does not exist\n"


@pytest.mark.slow
def test_at_5000_tests_shards_partition_and_100_more_move_none(tmp_path: Path) -> None:
    """The issue's size, in process (discovery only: no 5,000-test runs)."""
    root = generate(tmp_path / "big", Spec.for_tests(5000, handler_every=0))
    ids = [case.test_id for case in discover(load_registry("agents:registry", str(root)).resolve_config("prod"))]
    assert len(ids) == len(set(ids)) == 5000
    placed = shard_of(ids, 3)
    assert sorted(t for k in (1, 2, 3) for t in ids if placed[t] == k) == sorted(ids)
    root = generate(tmp_path / "bigger", Spec.for_tests(5100, handler_every=0))
    sys.modules.pop("agents", None)
    more = [case.test_id for case in discover(load_registry("agents:registry", str(root)).resolve_config("prod"))]
    assert len(more) == 5100 and set(ids) <= set(more)
    grown = shard_of(more, 3)
    assert all(grown[t] == placed[t] for t in ids)
    sys.modules.pop("agents", None)
