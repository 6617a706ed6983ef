"""Which CI pipeline, shard and commit a run belongs to: stamped on each of its records, so `oac results` and
`oac report` can total a pipeline across its shards (see `history.pipelines`).

The pipeline id is `--pipeline` when given, else the CI's own: GitHub Actions' run id and attempt (a re-run is a
new pipeline), GitLab's pipeline id. Outside CI there is none: each run is a pipeline of its own."""

import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

_SHA = re.compile(r"^[0-9a-f]{40}([0-9a-f]{24})?$")


def pipeline_id(given: str | None, env: Mapping[str, str] | None = None) -> str | None:
    env = os.environ if env is None else env
    if given:
        return given
    if env.get("GITHUB_RUN_ID"):
        return f"github:{env['GITHUB_RUN_ID']}.{env.get('GITHUB_RUN_ATTEMPT') or '1'}"
    if env.get("CI_PIPELINE_ID"):
        return f"gitlab:{env['CI_PIPELINE_ID']}"
    return None


def commit_of(root: Path, env: Mapping[str, str] | None = None) -> str | None:
    """The commit under test: the CI's (GITHUB_SHA, CI_COMMIT_SHA), else the checkout's HEAD read from `.git`
    (no git process), else None."""
    env = os.environ if env is None else env
    for name in ("GITHUB_SHA", "CI_COMMIT_SHA"):
        if _SHA.match(env.get(name, "")):
            return env[name]
    git = root / ".git"
    try:
        head = (git / "HEAD").read_text(encoding="ascii").strip()
        if _SHA.match(head):
            return head
        ref = head.removeprefix("ref: ").strip()
        if not ref.startswith("refs/") or ".." in ref:
            return None
        loose = git / ref
        if loose.is_file():
            value = loose.read_text(encoding="ascii").strip()
            return value if _SHA.match(value) else None
        for line in (git / "packed-refs").read_text(encoding="ascii").splitlines():
            sha, _, name = line.partition(" ")
            if name == ref and _SHA.match(sha):
                return sha
    except (OSError, UnicodeDecodeError):
        return None
    return None


def shard_label(shard: str | None) -> str | None:
    """`K/N` without spaces."""
    return "".join(shard.split()) if shard else None


def run_stamp(plan: Any) -> tuple[str | None, str | None, str | None]:
    """(pipeline, shard, commit) of a plan's records: worked out once per plan."""
    stamp = plan.__dict__.get("_pipeline_stamp")
    if stamp is None:
        options = plan.options
        stamp = plan.__dict__["_pipeline_stamp"] = (
            pipeline_id(options.pipeline), shard_label(options.shard), commit_of(plan.root))
    return stamp


def defined_in(test: Any, root: Path) -> tuple[str | None, int | None]:
    """(file relative to the project root, line) where `test` was built; (None, None) outside the project."""
    where = getattr(test, "defined_at", None)
    if where is None:
        return None, None
    prefix = str(root) + os.sep
    return (where[0][len(prefix):].replace(os.sep, "/"), where[1]) if where[0].startswith(prefix) else (None, None)
