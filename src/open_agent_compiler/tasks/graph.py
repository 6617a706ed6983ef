"""The task graph: one compile task per (config, dialect), one task per discovered test.

A test task is up to date iff its last run under the same key passed; its key folds in everything that can
change its result (see `testing.keys`). Failed runs leave no green state, so they always run again.
"""

import inspect
import os
import re
import time
import uuid
from collections.abc import Iterator
from functools import partial
from pathlib import Path
from typing import Any

import xxhash
from doit.exceptions import TaskFailed
from doit.globals import Globals

from open_agent_compiler.compiler.dialects import get_dialect
from open_agent_compiler.errors import OacError
from open_agent_compiler.model.factory import load_registry
from open_agent_compiler.model.hashing import digest, digest_bytes
from open_agent_compiler.testing.discovery import TestCase, discover, select
from open_agent_compiler.testing.keys import FileDigests, KeyParts, key_parts
from open_agent_compiler.testing.results import TestOutcome, now_iso
from open_agent_compiler.testing.handlers import start_handler
from open_agent_compiler.testing.prefetch import HandlerPrefetch
from open_agent_compiler.testing.runner import RunSettings, handler_call, run_case
from open_agent_compiler.testing.invokers.select import load_invoker
from open_agent_compiler.testing.judges import judge_key, load_judge
from open_agent_compiler.tasks.backend import OacStateDB
from open_agent_compiler.tasks.build_sync import sync_build
from open_agent_compiler.tasks.memo_store import load_key_cache, load_memo, save_key_cache, save_memo
from open_agent_compiler.tasks.settings import TestOptions
from open_agent_compiler.tasks.state_paths import check_state_paths, on_state, state_error

TEST_GROUP = "test"
COMPILE_GROUP = "oac_compile"
_UNSAFE = re.compile(r"[^A-Za-z0-9_.:/@+-]")
_PLANS: dict[str, "TestPlan"] = {}  # run_id → plan, so a reporter built by doit can find its run


def task_name(config: str, test_id: str) -> str:
    """A doit-safe, stable name: readable where possible, with a digest suffix where characters were replaced."""
    raw = f"{config}:{test_id}"
    safe = _UNSAFE.sub("_", raw)
    return safe if safe == raw else f"{safe}~{xxhash.xxh32_hexdigest(raw)}"


class CompiledCheck:
    def __init__(self, key: str) -> None:
        self.key = key

    def __call__(self, task: Any, values: dict[str, Any]) -> bool:
        return values.get("compiled") == self.key


class TestPlan:
    """Everything one run needs, computed once: resolved config, tests, compiled output, keys."""

    __test__ = False

    def __init__(self, options: TestOptions) -> None:
        check_state_paths(options)  # every place the run writes is usable, before anything runs
        self.options = options
        self.run_id = uuid.uuid4().hex
        root = options.root
        registry = load_registry(options.factory, str(root))
        self.resolved = registry.resolve_config(options.config)
        self.dialect = get_dialect(options.dialect)
        self.cases = select(discover(self.resolved), kind=options.kind, text=options.filter)
        self.settings = RunSettings(project_root=root, build_dir=options.build_dir, dialect=options.dialect,
                                    timeout=options.timeout, hermetic=options.hermetic,
                                    invoker=load_invoker(options.invoker, root=root, factory=options.factory,
                                                         script=options.invoker_script, dialect=options.dialect),
                                    judge=load_judge(options.judge, root), strict=options.strict)
        self.invoker_key = self.settings.invoker.info.key() if self.settings.invoker is not None else None
        self.judge_key = judge_key(options.judge, self.settings.judge, root)
        self.compile_task = f"{COMPILE_GROUP}:{task_name(options.config, options.dialect)}"
        self.needs_compile = any(case.kind != "tool" for case in self.cases)
        self.output = None
        if self.needs_compile:
            memo_path = options.state_dir / "render-memo" / f"{options.dialect}.json"
            memo = load_memo(memo_path)
            self.output = self.dialect.compile(self.resolved, source_root=root, memo=memo)
            with on_state(memo_path, "write the cache"):
                save_memo(memo_path, memo)
        self.contents = contents = self.output.file_map() if self.output is not None else {}
        self.compiled_paths = sorted(contents)
        self.compiled_key = digest([(path, digest_bytes(contents[path])) for path in self.compiled_paths])
        self.artifact_paths: dict[str, tuple[str, ...]] = {}
        self.artifact_digests: dict[str, str] = {}
        if self.output is not None:
            for agent in self.resolved.agents:
                paths = self.dialect.capability_files(agent.compiled_name)
                self.artifact_paths[agent.compiled_name] = paths
                self.artifact_digests[agent.compiled_name] = digest(
                    [(p, digest_bytes(contents[p])) for p in paths if p in contents])
        self.files = FileDigests(root)
        self.by_id = {case.test_id: case for case in self.cases}
        self._parts: dict[str, KeyParts] = {}
        self.keys = self._keys(options.state_dir / "key-cache" / f"{options.dialect}.json")
        self.green: dict[str, str] = {}
        self.prefetch = HandlerPrefetch([])
        _PLANS[self.run_id] = self

    def _keys(self, cache_path: Path) -> dict[str, str]:
        """test_id → key: from the key cache for agents whose scope is unchanged since the last run, else computed."""
        cache = load_key_cache(cache_path)
        keys = cache.keys(self.cases, self.resolved, self.artifact_digests, self.options.dialect, self.options.variant,
                          self.parts_of, self.invoker_key, self.judge_key)
        with on_state(cache_path, "write the cache"):
            save_key_cache(cache_path, cache)
        return keys

    def parts_of(self, test_id: str) -> KeyParts:
        """The named parts of a test's key, computed when first asked (a run asks only for tests that run)."""
        parts = self._parts.get(test_id)
        if parts is None:
            parts = self._parts[test_id] = key_parts(
                self.by_id[test_id], resolved=self.resolved, files=self.files, artifact_digests=self.artifact_digests,
                dialect=self.options.dialect, variant=self.options.variant, invoker=self.invoker_key,
                judge=self.judge_key)
        return parts

    # task dictionaries (doit's dodo format) -------------------------------------------------------------------
    def green_from_state(self) -> dict[str, str]:
        """test_id → time of the green run each up-to-date test matches, read from doit's dependency DB.

        These tests are settled before doit starts, so a warm run costs one dict lookup per test instead of
        doit's per-task machinery; failed or changed tests become tasks as usual.
        """
        manager = Globals.dep_manager
        if manager is None or self.options.force:
            return {}
        backend = getattr(manager, "backend", None)
        green = {}
        for case in self.cases:
            name = f"{TEST_GROUP}:{task_name(self.options.config, case.test_id)}"
            key = self.keys[case.test_id]
            if isinstance(backend, OacStateDB):  # two indexed columns, no JSON to decode
                saved_key, at = backend.green(name)
                if saved_key == key:
                    green[case.test_id] = at or "an earlier run"
                continue
            values = manager.get_values(name)  # any other doit backend: the saved values say the same
            if values.get("key") == key and values.get("status") == "pass":
                green[case.test_id] = values.get("at", "an earlier run")
        return green

    def task_dicts(self) -> Iterator[dict[str, Any]]:
        self.green = self.green_from_state()
        pending = [case for case in self.cases if case.test_id not in self.green]
        self.prefetch = HandlerPrefetch([(case.test_id, partial(start_handler, **call)) for case in pending
                                         if (call := handler_call(case, self.resolved, self.settings))])
        if any(case.kind != "tool" for case in pending):
            assert self.output is not None
            build_dir = self.options.build_dir  # resolved once, not once per file
            yield {
                "basename": COMPILE_GROUP,
                "name": task_name(self.options.config, self.options.dialect),
                "doc": f"compile config {self.options.config!r} for {self.options.dialect}",
                "actions": [(compile_action, [self.run_id])],
                "uptodate": [CompiledCheck(self.compiled_key)],
                "targets": [f"{build_dir}{os.sep}{path}" for path in self.compiled_paths],
                "meta": {"oac_compile": {"run_id": self.run_id}},
                "verbosity": 0,
            }
        for case in pending:
            yield self._test_task(case)

    def _test_task(self, case: TestCase) -> dict[str, Any]:
        task: dict[str, Any] = {
            "name": task_name(self.options.config, case.test_id),
            "doc": f"{case.kind} test {case.name!r} on {case.target_name!r}",
            "actions": [(test_action, [self.run_id, case.test_id])],
            # No `uptodate`: green_from_state already settled every up-to-date test from doit's DB, so each task
            # handed to doit must run (doit treats a task without dependencies as never up to date).
            "meta": {"oac": {"run_id": self.run_id, "test_id": case.test_id}},
            "verbosity": 0,
        }
        if case.kind != "tool":
            task["task_dep"] = [self.compile_task]
        return task

    def model_name(self, case: TestCase) -> str | None:
        if case.slot is None:
            return None
        params = self.resolved.agent(case.slot).model_parameters
        return params.model_name if params else None


def plan_for(run_id: str) -> TestPlan:
    return _PLANS[run_id]


def active_plans() -> list[TestPlan]:
    return list(_PLANS.values())


def retire(run_id: str) -> None:
    """Forget a finished run, so a later run in the same process reports only its own tests; kill handlers
    started early for tests that did not get to run."""
    plan = _PLANS.pop(run_id, None)
    if plan is not None:
        plan.prefetch.close()


# actions: module-level so that doit's process pool can run them ---------------------------------------------
def compile_action(run_id: str, task: Any) -> None | TaskFailed:
    plan = plan_for(run_id)
    previous = Globals.dep_manager.get_values(task.name).get("files", {}) if Globals.dep_manager else {}
    try:
        task.values["files"] = sync_build(plan.contents, plan.options.build_dir, previous)
    except OSError as exc:  # one line naming the path, not doit's traceback
        return TaskFailed(str(state_error(plan.options.build_dir, exc, "write the build")))
    except OacError as exc:  # fsio refused a path (a directory or link in the way): its line names it
        return TaskFailed(str(exc))
    task.values["compiled"] = plan.compiled_key


def test_action(run_id: str, test_id: str, task: Any) -> None | TaskFailed:
    plan = plan_for(run_id)
    case = plan.by_id[test_id]
    started = time.perf_counter()
    started_handler = plan.prefetch.take(test_id)
    plan.prefetch.top_up()  # the next tests' handlers start while this one runs
    try:
        outcome = run_case(case, plan.resolved, plan.settings, plan.artifact_paths.get(case.target_name, ()),
                           started_handler)
    except Exception as exc:  # noqa: BLE001 - one broken test must not stop the run
        outcome = TestOutcome(status="fail", score=0.0, skip_reason=f"internal error: {type(exc).__name__}: {exc}",
                              duration_s=time.perf_counter() - started)
    finished = now_iso()
    task.meta["oac_outcome"] = outcome
    task.meta["oac_finished"] = finished
    if outcome.status == "fail":
        return TaskFailed(outcome.first_failure())
    # Saved by doit as the task's values (returning them would store them a second time as its result).
    parts = plan.parts_of(test_id)
    task.values.update({"key": plan.keys[test_id], "status": outcome.status, "at": finished,
                        "parts": parts.model_dump(mode="json")})
    return None


# doit inspects an action's signature before every call (5,000 times in a 5,000-test run); inspect returns a
# stored `__signature__` at once.
for _action in (compile_action, test_action):
    _action.__signature__ = inspect.signature(_action)  # type: ignore[attr-defined]
