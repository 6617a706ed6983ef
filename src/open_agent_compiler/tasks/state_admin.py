"""`oac state status` and `oac state prune`: where a project's green state lives and how much it holds."""

import os
import sqlite3
from pathlib import Path
from typing import Any

from open_agent_compiler.tasks.settings import STATE_DB, STATE_DIR, TestOptions, find_project
from open_agent_compiler.tasks.shared_store import SharedStore, check_url
from open_agent_compiler.tasks.state_paths import on_state


def state_options(start: Path) -> TestOptions:
    """The state settings of the project `start` is in ([tool.oac] `state`/`project`, OAC_STATE_URL)."""
    project = find_project(start)
    values = {k: v for k, v in project.values.items() if k in ("state", "project")}
    if os.environ.get("OAC_STATE_URL"):
        values["state"] = os.environ["OAC_STATE_URL"]
    return TestOptions(factory="-", config="-", project_root=project.root, **values)


def local_status(db_path: Path) -> dict[str, Any]:
    """Rows of the local state database: tests with a green key, tombstones, results not yet pushed."""
    found: dict[str, Any] = {"where": str(db_path), "exists": db_path.is_file(), "green": 0, "tasks": 0,
                             "unpushed": 0}
    if not found["exists"]:
        return found
    with on_state(db_path, "read the state database"):
        conn = sqlite3.connect(f"file:{db_path}?mode=ro", uri=True, timeout=60)
        try:
            found["tasks"], found["green"] = conn.execute(
                "select count(*), count(green_key) from doit").fetchone()
            tables = {row[0] for row in conn.execute("select name from sqlite_master where type = 'table'")}
            if "shared_outbox" in tables:
                found["unpushed"] = conn.execute("select count(*) from shared_outbox").fetchone()[0]
        finally:
            conn.close()
    return found


def shared_store(options: TestOptions) -> SharedStore | None:
    from open_agent_compiler.tasks.planning import project_name

    if options.state is None:
        return None
    return SharedStore(check_url(options.state), project_name(options)).connect()


def default_db(root: Path) -> Path:
    return root / STATE_DIR / STATE_DB
