"""`oac state export` / `oac state import` on a real PostgreSQL: what the shipped workflow carries between
pipelines whose databases live only as long as their jobs."""

import json
from pathlib import Path

from shared_project import make

T1, T3 = "2026-12-04T10:00:00.000+00:00", "2026-12-04T10:00:01.000+00:00"


def line(task: str, key: str, status: str, finished: str) -> str:
    return json.dumps({"test": task, "key": key, "status": status, "finished_at": finished, "imports": ["helper.py"],
                       "duration_s": 0.5, "scope": None}) + "\n"


def test_import_in_any_order_keeps_the_last_finished_and_export_gives_it_back(pg, tmp_path: Path) -> None:
    project = make(tmp_path / "proj")
    older = project.write("older.jsonl", line("test:prod:t", "k", "pass", T1) + line("test:prod:u", "k", "pass", T1))
    newer = project.write("newer.jsonl", line("test:prod:t", "k", "fail", T3))
    exported = []
    for order, database in (((older, newer), "a"), ((newer, older), "b")):
        env = {**pg.env(pg.fresh_database(f"{pg.database}_{database}"))}
        done = project.oac("state", "import", *map(str, order), env=env, check_code=0)
        assert "3 outcomes from 2 files" in done.stdout
        out = tmp_path / f"export-{database}.jsonl"
        project.oac("state", "export", "-o", str(out), env=env, check_code=0)
        exported.append(out.read_text())
    assert exported[0] == exported[1]
    rows = [json.loads(text) for text in exported[0].splitlines()]
    assert [(r["test"], r["status"], r["imports"]) for r in rows] == [("test:prod:t", "fail", ["helper.py"]),
                                                                      ("test:prod:u", "pass", ["helper.py"])]


def test_a_bad_line_is_one_line_naming_it_and_nothing_is_imported(pg, tmp_path: Path) -> None:
    project = make(tmp_path / "proj")
    good = project.write("good.jsonl", line("test:prod:t", "k", "pass", T1))
    bad = project.write("bad.jsonl", line("test:prod:u", "k", "pass", T1) + '{"test": "x", "key": "k", "status": "ok"}\n')
    done = project.oac("state", "import", str(good), str(bad), env=pg.env(pg.database), check_code=2)
    assert done.stderr == f"oac: {bad}:2: 'status' must be \"pass\" or \"fail\"\n"
    status = project.oac("state", "status", "--format", "json", env=pg.env(pg.database), check_code=0)
    assert json.loads(status.stdout)["shared"]["keys"] == 0


def test_export_since_keeps_only_what_finished_within_the_age(pg, tmp_path: Path) -> None:
    from datetime import datetime, timedelta, timezone

    project = make(tmp_path / "proj")
    now = datetime.now(timezone.utc)
    old, recent = ((now - timedelta(days=days)).isoformat(timespec="milliseconds") for days in (31, 29))
    given = project.write("given.jsonl", line("test:prod:old", "k", "pass", old)
                          + line("test:prod:recent", "k", "pass", recent) + line("test:prod:unknown", "k", "pass", ""))
    env = pg.env(pg.database)
    project.oac("state", "import", str(given), env=env, check_code=0)
    out = tmp_path / "kept.jsonl"
    done = project.oac("state", "export", "--since", "30", "-o", str(out), env=env, check_code=0)  # 30 is days
    assert "wrote 2 outcomes" in done.stdout
    assert [json.loads(text)["test"] for text in out.read_text().splitlines()] == ["test:prod:recent",
                                                                                 "test:prod:unknown"]
