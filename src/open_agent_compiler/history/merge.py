"""Merging the JSONL results of several runs (e.g. the shards of one CI matrix) into one file and one summary.

- Idempotent and order-independent: records are deduplicated by identity (run, test, repeat, time) and written
  sorted, so merging A with B, B with A, or A+B with A again gives the same bytes.
- The summary counts each test (per config) by its latest record, the way an unsharded run counts it: a sharded
  run records its green skips too (`skipped`, "green: …"), so the merged counts equal an unsharded run's.
  Records of single repeats count through their test's summary record (`repeats`), never one by one.
- A conflict — the same test under the same key recorded as pass and as fail — is reported, and the test counts
  as failed: a merge never turns a failure into a pass.
"""

import json
from collections.abc import Iterable, Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict

STATUSES = ("pass", "fail", "skipped", "not_runnable")


class Conflict(BaseModel):
    model_config = ConfigDict(frozen=True)

    config: str | None
    test_id: str
    key: str


class Merged(BaseModel):
    model_config = ConfigDict(frozen=True)

    records: list[dict[str, Any]]
    counts: dict[str, int]  # discovered, pass, fail, skipped, not_runnable, flaky
    conflicts: list[Conflict]
    failures: list[tuple[str, str]]  # (test id, first failing evidence)

    def summary(self) -> str:
        c = self.counts
        return (f"oac test: discovered={c['discovered']} passed={c['pass']} failed={c['fail']} "
                f"skipped={c['skipped']} not_runnable={c['not_runnable']}"
                + (f" flaky={c['flaky']}" if c["flaky"] else ""))


def _repeat(record: Mapping[str, Any]) -> tuple[int, str]:
    """A record's repeat index, comparable whatever the file holds (`2`, `"r2"`, `[2]`, `1e999`): an int sorts
    first by value, anything else after it by its JSON text."""
    value = record.get("repeat") or 0
    if isinstance(value, int) and not isinstance(value, bool):
        return (value, "")
    return (1 << 62, json.dumps(value, sort_keys=True, default=str))


def _identity(record: Mapping[str, Any]) -> tuple[str, str, tuple[int, str], str]:
    return (str(record.get("run_id", "")), str(record.get("test_id", "")), _repeat(record),
            str(record.get("timestamp", "")))


def _order(record: Mapping[str, Any]) -> tuple[str, str, str, tuple[int, str]]:
    return (str(record.get("timestamp", "")), str(record.get("run_id", "")), str(record.get("test_id", "")),
            _repeat(record))


def _canonical(record: Mapping[str, Any]) -> str:
    return json.dumps(record, sort_keys=True, default=str)


def _message(record: Mapping[str, Any]) -> str:
    for result in record.get("evidence") or ():
        if isinstance(result, dict) and not result.get("passed") and not result.get("skipped"):
            return f"{result.get('name')}: {result.get('evidence')}" if result.get("evidence") else str(result.get("name"))
    return str(record.get("skip_reason") or record.get("status"))


def merge(sources: Iterable[Iterable[Mapping[str, Any]]]) -> Merged:
    # Exact copies are one record; two different records under one identity are both kept (sorted by their
    # content, so the input order never decides which counts) and reported when they disagree on pass/fail.
    unique: dict[tuple[Any, ...], dict[str, Any]] = {}
    for records in sources:
        for record in records:
            if isinstance(record.get("test_id"), str) and record.get("status") in STATUSES:
                unique.setdefault((_identity(record), _canonical(record)), dict(record))
    ordered = [unique[found] for found in sorted(unique, key=lambda found: (_order(unique[found]), found[1]))]
    latest: dict[tuple[str | None, str], dict[str, Any]] = {}
    outcomes: dict[tuple[str | None, str, str], set[str]] = {}  # (config, test, key) → statuses seen
    twins: dict[tuple[Any, ...], set[str]] = {}  # identity → statuses of its different records
    for (identity, _), record in unique.items():
        twins.setdefault(identity, set()).add(record["status"])
    for record in ordered:
        if twins[_identity(record)] >= {"pass", "fail"}:  # one run's one result both passed and failed
            outcomes.setdefault((record.get("config"), record["test_id"], str(record.get("composite_hash"))),
                                set()).update(("pass", "fail"))
        if record.get("repeat"):
            continue
        where = (record.get("config"), record["test_id"])
        latest[where] = record
        if record["status"] in ("pass", "fail") and not record.get("flaky"):
            outcomes.setdefault((*where, str(record.get("composite_hash"))), set()).add(record["status"])
    conflicts = [Conflict(config=config, test_id=test_id, key=key)
                 for (config, test_id, key), seen in sorted(outcomes.items(), key=lambda item: str(item[0]))
                 if seen == {"pass", "fail"}]
    conflicted = {(c.config, c.test_id) for c in conflicts}
    counts = dict.fromkeys(("discovered", *STATUSES, "flaky"), 0)
    failures = []
    for where, record in sorted(latest.items(), key=lambda item: str(item[0])):
        counts["discovered"] += 1
        if record.get("flaky"):
            counts["flaky"] += 1
            if record["status"] == "fail":
                failures.append((where[1], _message(record)))
            continue
        status = "fail" if where in conflicted else record["status"]
        counts[status] += 1
        if status == "fail":
            failures.append((where[1], "conflict: the same key passed and failed" if where in conflicted
                             else _message(record)))
    return Merged(records=ordered, counts=counts, conflicts=conflicts, failures=failures)
