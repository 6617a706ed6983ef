"""The history by CI pipeline: the runs that share a pipeline id (its shards, `tasks.pipeline`) totalled as one;
a run without one is a pipeline of its own.

- A test counts in a pipeline by its latest record there (as `oac results merge` counts it), so three shards give
  one total, and a test that failed anywhere in the pipeline and did not pass after is listed as failing.
- Time saved counts only green skips, each at the skipped test's last measured (passing) duration:
  - a sharded run records its green skips (`skipped`, no duration: what `tasks.reporter` writes), and only those
    count: the tests of the other shards are not skipped, they ran elsewhere;
  - an unsharded run records only the tests that ran, so its skips are the tests green before it and not recorded
    in it (`views.Run.skipped_green`, an upper bound for a run narrowed with -k/--filter).
  A cold pipeline, where every test ran, saved nothing.
"""

from dataclasses import dataclass, field

from open_agent_compiler.history.views import STATUSES, History, Run, TestHistory


@dataclass
class Pipeline:
    pipeline_id: str
    runs: list[Run] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=lambda: dict.fromkeys(STATUSES, 0))  # per test, its latest
    failing: list[TestHistory] = field(default_factory=list)  # latest record in the pipeline failed
    skipped_green: int = 0
    saved_s: float = 0.0

    @property
    def shards(self) -> list[str]:
        return sorted({run.shard for run in self.runs if run.shard})

    @property
    def commits(self) -> list[str]:
        return sorted({run.commit for run in self.runs if run.commit})

    @property
    def finished(self) -> str:
        return max((run.finished for run in self.runs), default="")

    @property
    def started(self) -> str:
        return min((run.started for run in self.runs if run.started), default="")

    @property
    def ran_s(self) -> float:
        return sum(run.duration_s for run in self.runs)

    def as_dict(self) -> dict[str, object]:
        return {"pipeline": self.pipeline_id, "runs": [run.run_id for run in self.runs], "shards": self.shards,
                "commits": self.commits, "started": self.started, "finished": self.finished, "counts": self.counts,
                "failed": [test.test_id for test in self.failing], "skipped_green": self.skipped_green,
                "saved_s": round(self.saved_s, 3), "ran_s": round(self.ran_s, 3)}


def pipelines(history: History) -> list[Pipeline]:
    """The pipelines of `history`, in the order their first records are in the log (kept on the History)."""
    cached = history.__dict__.get("_pipelines")
    if cached is not None:
        return cached
    found: dict[str, Pipeline] = {}
    pipe_of: list[Pipeline] = []
    for run in history.runs:
        name = run.pipeline or run.run_id
        pipeline = found.get(name)
        if pipeline is None:
            pipeline = found[name] = Pipeline(pipeline_id=name)
        pipeline.runs.append(run)
        pipe_of.append(pipeline)
    sharded = {id(p) for p in found.values() if any(run.shard for run in p.runs)}
    for pipeline in found.values():
        if id(pipeline) not in sharded:  # no skip records: the tests green before each run and not in it
            pipeline.skipped_green = sum(run.skipped_green for run in pipeline.runs)
            pipeline.saved_s = sum(run.saved_s for run in pipeline.runs)
    for test in history.tests.values():
        green: float | None = None  # the last passing duration while the test stays green
        latest: dict[int, tuple[Pipeline, str, float | None]] = {}  # id(pipeline) → its latest status here
        for index, status, duration in test.points:
            pipeline = pipe_of[index]
            green_skip = status == "skipped" and duration == 0.0 and green is not None
            latest[id(pipeline)] = (pipeline, status, green if green_skip else None)
            if status == "pass":
                green = duration
            elif not green_skip:
                green = None
        for pipeline, status, saved in latest.values():
            pipeline.counts[status] += 1
            if status == "fail":
                pipeline.failing.append(test)
            elif saved is not None and id(pipeline) in sharded:
                pipeline.skipped_green += 1
                pipeline.saved_s += saved
    listed = list(found.values())
    for pipeline in listed:
        pipeline.failing.sort(key=lambda test: test.test_id)
    history.__dict__["_pipelines"] = listed
    return listed


def last_pipeline(history: History) -> Pipeline | None:
    """The pipeline of the log's latest run."""
    if not history.runs:
        return None
    last = history.runs[-1]
    name = last.pipeline or last.run_id
    return next(p for p in pipelines(history) if p.pipeline_id == name)


def saved_total(history: History) -> float:
    return sum(pipeline.saved_s for pipeline in pipelines(history))
