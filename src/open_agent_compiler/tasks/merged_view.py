"""`oac results merge`'s JUnit and GitHub annotations: the merged result (`history.merge`) as the tally a run's
JUnit writer and annotations read, so a pipeline's merged report says what one unsharded run would."""

from typing import Any

from open_agent_compiler.history.merge import Merged


class MergedTally:
    """What `tasks.junit.write_junit` and `tasks.annotations.annotate` read of a run's tally, for merged results:
    one row per test (per config) from its latest record, failures as the merge counts them (a pass/fail conflict
    under one key is a failure), and where each test is defined when its records say."""

    def __init__(self, merged: Merged) -> None:
        latest: dict[tuple[Any, str], dict[str, Any]] = {}
        for record in merged.records:  # in the merge's order: the last one is the latest
            if not record.get("repeat"):
                latest[(record.get("config"), record["test_id"])] = record
        failed = dict(merged.failures)
        configs = {config for config, _ in latest}
        self.rows: list[tuple[str, str, str, float, str]] = []
        self.where: dict[str, tuple[str, int]] = {}
        self.failures = list(merged.failures)
        for (config, test_id), record in sorted(latest.items(), key=lambda item: str(item[0])):
            status = str(record["status"])
            message = str(record.get("skip_reason") or "")
            if record.get("flaky"):
                status = "flaky"
            elif test_id in failed:
                status, message = "fail", failed[test_id]
            name = str(record.get("test_name") or test_id)
            duration = record.get("duration_s")
            seconds = float(duration) if isinstance(duration, (int, float)) and duration == duration \
                and abs(duration) != float("inf") else 0.0
            shown = test_id if len(configs) < 2 else f"{test_id}::{config}"
            self.rows.append((shown, name if len(configs) < 2 else f"{name} [{config}]", status, seconds, message))
            file, line = record.get("file"), record.get("line")
            if isinstance(file, str) and isinstance(line, int) and not isinstance(line, bool):
                self.where[test_id] = (file, line)
        counts = merged.counts
        self.failed, self.skipped, self.not_runnable = counts["fail"], counts["skipped"], counts["not_runnable"]
        self.flaky, self.flaky_as = counts["flaky"], "fail"
        self.errors: list[str] = []
