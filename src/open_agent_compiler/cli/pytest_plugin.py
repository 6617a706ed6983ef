"""The pytest plugin proper: every embedded test of one config is a pytest item whose node id is its stable test
id, run by the same doit graph as `oac test`, with the same keys, green state and JSONL records. A pytest session
(each xdist worker its own) plans once and opens one doit run (`tasks.stepped`: `tasks.run`'s loader, backend and
our reporter); each item is one step of it, running that test's task; the session's end ends the doit run.

- a green test (doit finds it up to date) is a pytest skip: `green: key unchanged since <time>`;
- pass → pass; fail → failure showing the lines `oac test -v` prints; not_runnable and tests whose evaluators
  all skipped → skip with the reason (`--strict` in `[tool.oac]` makes them failures, as in `oac test`);
- tags are markers (`-m`), the test id is the item's name (`-k`), so `--lf`, `-x`, `--junitxml`, `-n` (xdist:
  each worker plans once, opens one doit run and runs the items it is given) and IDE panes work as for any test.

Bad input (an unknown config, a factory that does not load) is a pytest usage error (exit 4), one line.
"""

import io
from pathlib import Path
from typing import Any

import pytest

from open_agent_compiler.errors import OacError
from open_agent_compiler.execution import watchdog, zygote
from open_agent_compiler.tasks.graph import TestPlan, retire
from open_agent_compiler.tasks.pipeline import defined_in
from open_agent_compiler.tasks.records import write_records_now
from open_agent_compiler.tasks.reporter import OacReporter
from open_agent_compiler.tasks.stepped import SteppedRun
from open_agent_compiler.tasks.settings import build_options

GREEN = "green: key unchanged since {}"


class OacItem(pytest.Item):
    def __init__(self, *, plugin: "OacPlugin", test_id: str, line: int | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.plugin = plugin
        self.test_id = test_id
        self.line = line  # 1-based line of the test's definition in `path` (None: unknown)
        self.lines: list[str] = []

    def runtest(self) -> None:
        status, message, self.lines = self.plugin.run_one(self.test_id)
        if status == "green":
            raise pytest.skip.Exception(GREEN.format(message), _use_item_location=True)
        if status in ("skipped", "not_runnable"):
            raise pytest.skip.Exception(f"{status}: {message}", _use_item_location=True)
        if status != "pass":
            raise OacTestFailed(message)

    def repr_failure(self, excinfo: Any, style: Any = None) -> str:
        if isinstance(excinfo.value, OacTestFailed):
            return "\n".join(self.lines) or str(excinfo.value)
        return str(super().repr_failure(excinfo, style))

    def reportinfo(self) -> tuple[Path, int | None, str]:
        return self.path, None if self.line is None else self.line - 1, self.test_id  # pytest's lines are 0-based


class OacTestFailed(Exception):
    """An embedded test failed (its evidence is in the item's report)."""


class OacPlugin:
    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.plan: TestPlan | None = None
        self.run: SteppedRun | None = None  # opened by the first item that runs, ended with the session
        self.reporter: OacReporter | None = None

    def _options(self) -> Any:
        given = {"factory": self.config.getoption("oac") or None, "config": self.config.getoption("oac_config"),
                 "dialect": self.config.getoption("oac_dialect"),
                 "repeat": 1}  # one item per test: repeating is pytest's business (e.g. pytest-repeat)
        return build_options(Path.cwd(), given)

    @pytest.hookimpl(wrapper=True)
    def pytest_make_collect_report(self, collector: pytest.Collector) -> Any:
        """The session's collection also yields one item per embedded test (so pytest counts, selects and
        reports them like any other item)."""
        report = yield
        if isinstance(collector, pytest.Session) and report.outcome == "passed":
            report.result.extend(self._items(collector))
        return report

    def _items(self, session: pytest.Session) -> list[pytest.Item]:
        watchdog.before_user_code(write_records_now)  # (the watchdog, if any, was forked by `oac_pytest`)
        zygote.start()  # before the registry exists, so handler children fork from a small process
        try:
            self.plan = TestPlan(self._options())
        except OacError as exc:
            raise pytest.UsageError(f"oac: {' '.join(str(exc).split())}") from None
        module = self.plan.options.factory.partition(":")[0].replace(".", "/")
        where = next((path for path in (self.plan.root / f"{module}.py", self.plan.root / module / "__init__.py")
                      if path.is_file()), self.plan.root)
        known: set[str] = set()
        items: list[pytest.Item] = []
        for case in self.plan.cases:
            file, line = defined_in(case.test, self.plan.root)  # the test's own definition, where known
            item = OacItem.from_parent(session, name=case.test_id, nodeid=case.test_id, plugin=self,
                                       path=where if file is None else self.plan.root / file, line=line,
                                       test_id=case.test_id)
            for tag in case.test.tags:
                if tag not in known:
                    self.config.addinivalue_line("markers", f"{tag}: oac test tag")
                    known.add(tag)
                item.add_marker(tag)
            items.append(item)
        return items

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        """What `oac test` says before its run (the 1.16.5 migration notes, ...): pytest captures what is printed
        while it collects, so the notes get a section of the summary."""
        if self.plan is not None and self.plan.notes:
            terminalreporter.section("oac notes")
            for note in self.plan.notes:
                terminalreporter.write_line(f"oac: {note}")

    def pytest_sessionfinish(self) -> None:
        try:
            if self.run is not None and self.reporter is not None:
                self.reporter.out = io.StringIO()  # its summary is pytest's to print
                self.run.finish()  # doit saves the state and closes it (also after -x or Ctrl-C)
        finally:
            if self.plan is not None:
                retire(self.plan.run_id)

    def run_one(self, test_id: str) -> tuple[str, str, list[str]]:
        """(status, message, the lines `oac test -v` prints for it) of one test, run by doit as one step of the
        session's doit run."""
        assert self.plan is not None
        if self.run is None:
            self.reporter = OacReporter(io.StringIO())
            try:
                self.run = SteppedRun(self.plan, self.reporter)
            except OacError as exc:
                raise pytest.UsageError(f"oac: {' '.join(str(exc).split())}") from None
        reporter = self.reporter
        assert reporter is not None
        out = reporter.out = io.StringIO()
        tally = reporter.tally
        rows, errors = len(tally.rows), len(tally.errors)
        self.run.step(self.plan.names[test_id])
        lines = [line for line in out.getvalue().splitlines()
                 if line.startswith("  ") and not line.startswith("  - ")]
        if len(tally.rows) == rows:
            return "fail", "; ".join(tally.errors[errors:]) or "not run", lines
        _, _, status, _, message = tally.rows[rows]
        if status == "skipped" and message.startswith("matches green run from "):
            return "green", message.removeprefix("matches green run from "), lines
        return status, message, lines
