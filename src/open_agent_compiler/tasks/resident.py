"""A test plan kept loaded between the cycles of `oac test --watch`, re-keyed where a save changed its inputs.

Loading (the registry, discovery, compilation, keying every test) is most of a warm `oac test`. The resident plan
does it once; on a save it
- sends the save to a fresh load (`fresh_reason`) when the changed file is the settings, a folder, code no test's
  key covers (a new module can change what an import finds), or anything the registry's loading imported or read:
  the definitions may have changed, and no module of the project may survive from one load to the next (a
  handler script or a module only tests import runs in the cycle's forked process, never in the plan's);
- else re-keys the tests whose key covers a changed path (a file they read or run, a folder whose listing they
  read, an `inputs=` glob that can match it) and the tests whose saved discovered imports changed — with the
  file digests read afresh, as a fresh run reads them;
- hands doit exactly the tests a fresh `oac test` would run: those whose key is not the key of their last pass
  (the others are counted as doit counts a green skip), each cycle in a forked process, so the resident plan
  never runs a test and never changes by running one. doit saves its state, and the tests append their
  records, as in any run.
The plan is one of `oac test`'s; only options whose runs depend on nothing but the keys are kept resident.
"""

import gc
import os
import signal
import sqlite3
import sys
from collections.abc import Iterable
from pathlib import Path

from open_agent_compiler.errors import OacError
from open_agent_compiler.execution import leftovers, zygote
from open_agent_compiler.keys.key import FileDigests
from open_agent_compiler.tasks import planning
from open_agent_compiler.tasks.backend import BUSY_TIMEOUT_MS
from open_agent_compiler.tasks.graph import TestPlan
from open_agent_compiler.tasks.run import run_plan
from open_agent_compiler.tasks.settings import PYPROJECT, TestOptions
from open_agent_compiler.tasks.state_paths import check_state_paths
from open_agent_compiler.usercode import project_imports

_CODE_SUFFIXES = (".py", ".pyi", ".pth", ".so", ".pyd")
_GLOB = frozenset("*?[")


def not_resident(options: TestOptions) -> str | None:
    """Why a run with these options cannot be kept resident (its tests depend on more than their keys), or None."""
    if options.state is not None:
        return "the shared state decides green with other machines"
    if options.invoker is not None:
        return "agent tests' invoker and cassettes are keyed at load"
    for flag, on in (("--force", options.force), ("--lf", options.last_failed), ("--shard", options.shard),
                     ("--repeat", options.repeat > 1), ("--junit", options.junit)):
        if on:
            return f"{flag} runs depend on more than the keys"
    return None


def green_keys(db_path: Path) -> dict[str, str]:
    """task name → the key of its last pass, read in one SELECT (what the backend's green check compares)."""
    if not db_path.is_file():
        return {}
    try:
        conn = sqlite3.connect(f"file:{db_path}?mode=ro", uri=True, timeout=BUSY_TIMEOUT_MS / 1000)
        try:
            return dict(conn.execute("select task_id, green_key from doit where green_key is not null"))
        finally:
            conn.close()
    except sqlite3.Error:
        return {}  # doit's open of the state deals with it; every test then runs


def literal_prefix(pattern: str) -> str:
    """The path of a glob before its first wildcard ("" if it starts with one): whatever it matches lies there."""
    literal = []
    for part in pattern.split("/"):
        if _GLOB.intersection(part):
            break
        literal.append(part)
    return "/".join(literal)


class ResidentPlan:
    """One `TestPlan` and what it was loaded from, kept for the cycles of a watch."""

    def __init__(self, options: TestOptions) -> None:
        zygote.start()  # before the registry exists, so handler children fork from a small process
        self.plan = plan = TestPlan(options)
        for note in plan.notes:
            print(f"oac: {note}", file=sys.stderr)
        self.options = options
        self.root = plan.root
        # what loading the registry imported or read: a change to any of it is a fresh load
        self.loaded = frozenset(project_imports.loaded_project_files())
        self.labels: dict[str, frozenset[str]] = {}  # test id → the paths its key covers
        self.by_label: dict[str, set[str]] = {}  # path → the tests whose key covers it
        for test_id in plan.by_id:
            self._index(test_id)
        plan.settings  # noqa: B018 - imports the test runner once, not in every cycle's process (~50 ms)
        from open_agent_compiler.execution import handlers  # noqa: F401 - the same for real handlers
        gc.freeze()  # the plan is never traversed by a cycle's collections (nor copied by them page by page)

    def _index(self, test_id: str) -> None:
        for label in self.labels.get(test_id, ()):
            self.by_label[label].discard(test_id)
        labels = frozenset(self.plan.keyer.files_of(test_id) or ())
        self.labels[test_id] = labels
        for label in labels:
            self.by_label.setdefault(label, set()).add(test_id)

    def fresh_reason(self, changed: Iterable[str]) -> str | None:
        """Why these changed paths (relative to the root) need a fresh load, or None: re-keying covers them."""
        for path in changed:
            full = os.path.realpath(self.root / path)
            if path == PYPROJECT:
                return f"{path} holds the settings"
            if path.endswith(_CODE_SUFFIXES) and not self.by_label.get(path):  # (a new module may shadow another)
                return f"{path} is code no test's key covers"
            if full in self.loaded or any(f"{folder}/" in self.loaded for folder in _folders(full)):
                return f"loading the registry read {path}"
            if os.path.isdir(full):
                return f"{path} is a folder"
        return None

    def affected(self, changed: Iterable[str]) -> set[str]:
        """The tests whose key covers one of the changed paths."""
        found: set[str] = set()
        wide = [label for label in self.by_label if label.endswith("/") or label.startswith("inputs ")]
        for path in changed:
            found.update(self.by_label.get(path, ()))
            for label in wide:
                if label.startswith("inputs "):
                    prefix = literal_prefix(label[len("inputs "):])
                    hit = not prefix or path == prefix or path.startswith(prefix + "/")
                else:
                    hit = path.startswith(label) or f"{path}/" == label
                if hit:
                    found.update(self.by_label[label])
        return found

    def rekey(self, changed: Iterable[str]) -> set[str]:
        """Re-key what the changed paths and the saved discovered imports touch; the tests re-keyed."""
        plan = self.plan
        keyer = plan.keyer
        keyer.files = FileDigests(self.root)  # every digest read again, as a fresh run reads it
        stale = self.affected(changed)
        saved = planning.discovered_imports(self.options, plan.names)
        for test_id in plan.by_id:
            found = saved.get(test_id, [])
            if sorted(found) != sorted(keyer.discovered.get(test_id, ())):
                keyer.rekey(test_id, found)
                stale.add(test_id)
        for test_id in stale:
            keyer.forget_parts(test_id)
            plan.keys[test_id] = keyer.parts_of(test_id).key()
            self._index(test_id)
        if stale:  # (finding a mock's module may have imported its parent packages here: they are loaded now)
            self.loaded = frozenset(project_imports.loaded_project_files())
        return stale

    def due(self) -> set[str]:
        """The tests a fresh run would execute: their key is not the key of their last pass."""
        green = green_keys(self.options.state_db)
        keys = self.plan.keys
        return {test_id for test_id, name in self.plan.names.items() if green.get(name) != keys[test_id]}

    def cycle(self, changed: Iterable[str] | None) -> int:
        """Run (None: every test, as `oac test`; else after re-keying for `changed`) in a forked process; its exit
        code."""
        plan = self.plan
        only = None
        if changed is not None:
            rekeyed = self.rekey(changed)
            only = self.due()
            print(f"oac watch: resident plan: re-keyed {len(rekeyed)} test(s), {len(only)} to run")
        previous = signal.signal(signal.SIGINT, signal.SIG_IGN)  # the cycle's process gets Ctrl-C and ends
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:  # the cycle: its own run id, the chosen tests, doit's state and records as any run's
            code = 2
            try:
                signal.signal(signal.SIGINT, signal.default_int_handler)
                check_state_paths(self.options)  # what every run checks and cleans first (a fresh plan does it)
                leftovers.clean(self.root)
                plan.only = only
                plan.renew_run_id()
                code = run_plan(plan, unchanged=0 if only is None else len(plan.cases) - len(only))
            except KeyboardInterrupt:
                code = 130
            except OacError as exc:  # (the results log lost, the state unusable): its one line, as `oac test`
                print(f"oac: {' '.join(str(exc).split())}", file=sys.stderr)
                code = exc.exit_code
            finally:
                sys.stdout.flush()
                sys.stderr.flush()
                os._exit(code)
        try:
            _, status = os.waitpid(pid, 0)
        finally:
            signal.signal(signal.SIGINT, previous)
        code = os.waitstatus_to_exitcode(status)
        return 128 - code if code < 0 else code


def _folders(full: str) -> Iterable[str]:
    """The folders above a path, nearest first."""
    parent = os.path.dirname(full)
    while parent and parent != full:
        yield parent
        full, parent = parent, os.path.dirname(parent)
