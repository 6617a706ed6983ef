"""`oac test --watch`: after every cycle, the tests it executed and their outcomes are those a fresh `oac test`
executes on the same tree (a hypothesis series of edits: mocks, expectations, a broken registry, an unrelated
file); keys a/f/q; Ctrl-C leaves no process. Synchronisation is the watcher's own output, never time."""

import json
import os
import queue
import signal
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

from hypothesis import HealthCheck, example, given, settings, strategies as st

OAC = str(Path(sys.executable).with_name("oac"))
READY = "oac watch: watching"
TOOLS = ("alpha", "beta", "gamma")
LIMIT = 300  # seconds: only a deadline for a hung watcher, never a synchronisation

AGENTS = '''
from open_agent_compiler import (AgentDefinition, AgentHeader, AgentRegistry, BashToolPermission, CapabilityTest,
    CompilationConfig, EqualsEvaluator, MockResponse, TemplateSlot, TemplateTree, ToolDefinition,
    ToolDefinitionHeader, ToolDefinitionLogicBash, ToolTest)
import pathlib

import data

PROMPT = (pathlib.Path(__file__).parent / "prompt.txt").read_text()  # read while loading: a fresh load


def tool(name, mock=None, expected=None, inputs=()):
    return ToolDefinition(
        header=ToolDefinitionHeader(name=name, description="t", usage_explanation_long="t",
                                    usage_explanation_short="t", rules=[]),
        bash_tool=ToolDefinitionLogicBash(permission_bash=BashToolPermission(
            tool_name="bash", value="allow", allowed_commands=[f"run-{name} *"]),
            positive_examples=[], negative_examples=[], mode_specific_rules=[]),
        mock=mock or MockResponse(kind="fixed", fixed_output={"v": data.OUT[name]}),
        tool_tests=[ToolTest(name=f"{name}-value", input={}, inputs=inputs,
                             evaluators=(EqualsEvaluator(field="v", expected=expected or data.EXPECT[name]),))])


def data_tools():
    """mocked: its mock reads mockdata/m.json when called; globbed: keyed on fixtures/*.txt; moduled: its mock's
    module only the test imports (loading the registry does not)."""
    return [tool("mocked", MockResponse(kind="callable", callable_spec="data:from_file"), "x"),
            tool("globbed", MockResponse(kind="fixed", fixed_output={"v": "x"}), "x", ("fixtures/*.txt",)),
            tool("moduled", MockResponse(kind="callable", callable_spec="mockmod:value"), "x")]


def blocking_tool():
    return tool("alpha").model_copy(update={
        "header": tool("alpha").header.model_copy(update={"name": "blocker"}),
        "mock": MockResponse(kind="callable", callable_spec="data:block"),
        "tool_tests": [ToolTest(name="blocks", input={})]})


def registry():
    reg = AgentRegistry()
    blocking = [blocking_tool()] if getattr(data, "BLOCK", False) else []
    agent = AgentDefinition(header=AgentHeader(agent_id="a", name="a", description="a"),
                            system_prompt=PROMPT,
                            extra_tools=[tool(name) for name in data.TOOLS] + data_tools() + blocking,
                            capability_tests=[CapabilityTest(name="runs-alpha",
                                                             must_have_bash_patterns=("run-alpha x",))])
    reg.register_agent("a", agent)
    reg.register_template(TemplateTree(name="tpl", slots=[TemplateSlot(name="main", default_agent_id="a")]))
    reg.create_compilation_config(CompilationConfig(name="prod", template_name="tpl"))
    return reg
'''


FROM_FILE = """
def from_file(args):
    import json, pathlib
    return json.loads((pathlib.Path(__file__).parent / "mockdata" / "m.json").read_text())
"""


def data_text(out: dict[str, str], expect: dict[str, str], broken: bool) -> str:
    text = f"TOOLS = {TOOLS!r}\nOUT = {out!r}\nEXPECT = {expect!r}\n{FROM_FILE}"
    return text + ("this is not python(\n" if broken else "")


class Tree:
    """A project and the edits made to it (each written whole and renamed into place: one save)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        root.mkdir(parents=True)
        (root / "agents.py").write_text(AGENTS)
        self.out = {name: "x" for name in TOOLS}
        self.expect = {name: "x" for name in TOOLS}
        self.broken = False
        self.notes = 0
        (root / "mockdata").mkdir()
        (root / "fixtures").mkdir()
        self._write("prompt.txt", "be brief\n")
        self._write("mockdata/m.json", json.dumps({"v": "x"}))
        self._write("mockmod.py", "def value(args):\n    return {'v': 'x'}\n")
        self._write("data.py", data_text(self.out, self.expect, self.broken))

    def _write(self, name: str, text: str) -> None:
        scratch = self.root.parent / f".{self.root.name}-{name.replace('/', '-')}.tmp"  # outside the watched tree
        scratch.write_text(text)
        os.replace(scratch, self.root / name)

    def apply(self, edit: tuple) -> bool:
        """One save; True when it is a change the resident plan re-keys (no code, nothing loading read)."""
        what = edit[0]
        if what in ("out", "expect"):
            getattr(self, what)[edit[1]] = edit[2]
        elif what == "break":
            self.broken = edit[1]
        if what == "note":  # a file no test reads
            self.notes += 1
            self._write("NOTES.txt", f"note {self.notes}\n")
        elif what == "mock":  # the data a callable mock reads when a test calls it
            self._write("mockdata/m.json", json.dumps({"v": edit[1], "n": edit[2]}))
        elif what == "fixture":  # a file a test's inputs= glob matches: added, or deleted when it is there
            path = self.root / "fixtures" / f"f{edit[1]}.txt"
            if path.exists():
                path.unlink()
            else:
                self._write(f"fixtures/f{edit[1]}.txt", "fixture\n")
        elif what == "module":  # the module of a callable mock, imported by the test only
            self._write("mockmod.py", f"def value(args):\n    return {{'v': {edit[1]!r}}}  # {edit[2]}\n")
        elif what == "prompt":  # read by the registry while it loads
            self._write("prompt.txt", f"be {edit[1]}\n")
        else:
            self._write("data.py", data_text(self.out, self.expect, self.broken))
        return what in ("note", "mock", "fixture", "module")

    def records(self) -> list[dict]:
        path = self.root / ".oac" / "test_results.jsonl"
        return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


class Watcher:
    """`oac test --watch` in its own session; its stdout lines arrive on a queue."""

    def __init__(self, root: Path) -> None:
        self.process = subprocess.Popen([OAC, "test", "agents:registry", "--config", "prod", "--watch"], cwd=root,
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                        text=True, start_new_session=True)
        self.lines: queue.Queue[str | None] = queue.Queue()
        threading.Thread(target=self._pump, daemon=True).start()

    def _pump(self) -> None:
        for line in self.process.stdout:  # type: ignore[union-attr]
            self.lines.put(line.rstrip("\n"))
        self.lines.put(None)

    def cycle(self) -> list[str]:
        """The lines up to the next READY line (the end of a cycle)."""
        seen = []
        while True:
            line = self.lines.get(timeout=LIMIT)
            assert line is not None, f"the watcher ended: {seen}"
            seen.append(line)
            if line.startswith(READY):
                return seen

    def key(self, char: str) -> None:
        self.process.stdin.write(char)  # type: ignore[union-attr]
        self.process.stdin.flush()  # type: ignore[union-attr]

    def session_processes(self) -> list[int]:
        found = []
        for entry in Path("/proc").iterdir():
            try:
                if entry.name.isdigit() and int((entry / "stat").read_text().rsplit(")", 1)[1].split()[4]) == \
                        self.process.pid:
                    found.append(int(entry.name))
            except (OSError, ValueError, IndexError):
                continue
        return found

    def stop(self) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait(LIMIT)


def executed(records: list[dict]) -> set[tuple[str, str]]:
    return {(r["test_id"], r["status"]) for r in records}


def fresh(root: Path) -> tuple[int, set[tuple[str, str]]]:
    path = root / ".oac" / "test_results.jsonl"
    count = len(path.read_text().splitlines()) if path.exists() else 0
    done = subprocess.run([OAC, "test", "agents:registry", "--config", "prod"], cwd=root, capture_output=True,
                          text=True, timeout=LIMIT)
    lines = path.read_text().splitlines() if path.exists() else []
    return done.returncode, executed([json.loads(line) for line in lines[count:]])


EDITS = st.one_of(
    st.tuples(st.sampled_from(["out", "expect"]), st.sampled_from(TOOLS), st.sampled_from(["x", "y"])),
    st.tuples(st.just("break"), st.booleans()),
    st.tuples(st.just("note")),
    st.tuples(st.just("mock"), st.sampled_from(["x", "y"]), st.integers(0, 3)),
    st.tuples(st.just("fixture"), st.integers(0, 2)),
    st.tuples(st.just("module"), st.sampled_from(["x", "y"]), st.integers(0, 3)),
    st.tuples(st.just("prompt"), st.sampled_from(["brief", "terse"])),
)
RESIDENT = "oac watch: resident plan: re-keyed"
CODES = {"passed": 0, "failed": 1, "could not run (see the line above)": 2}


@settings(max_examples=4, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(EDITS, min_size=1, max_size=6))
@example([("expect", "beta", "y"), ("out", "alpha", "y"), ("note",)])  # a failing test, then another edited
# the resident plan: mock data edited (failing, then passing), a globbed file added and deleted, then a fresh load
@example([("mock", "y", 0), ("note",), ("mock", "x", 1), ("fixture", 0), ("fixture", 1), ("fixture", 0),
          ("module", "y", 0), ("module", "x", 1), ("prompt", "terse"), ("mock", "x", 2)])
def test_each_cycle_runs_what_a_fresh_oac_test_runs(edits: list[tuple]) -> None:
    with tempfile.TemporaryDirectory() as scratch:
        watched, plain = Tree(Path(scratch) / "watched"), Tree(Path(scratch) / "plain")
        watcher = Watcher(watched.root)
        try:
            first = watcher.cycle()
            code, ran = fresh(plain.root)
            assert executed(watched.records()) == ran and f"cycle 1 {_word(code)}" in "\n".join(first)
            loaded = True  # the last cycle loaded the registry: its plan stays
            for edit in edits:
                count = len(watched.records())
                rekeyed = watched.apply(edit)
                plain.apply(edit)
                lines = watcher.cycle()
                code, ran = fresh(plain.root)
                assert executed(watched.records()[count:]) == ran, (edit, lines)
                # a save of data while a plan is loaded is re-keyed in place, anything else loads afresh
                assert any(line.startswith(RESIDENT) for line in lines) == (rekeyed and loaded), (edit, lines)
                loaded = code != 2
                ends = [line for line in lines if line.startswith("oac watch: cycle ") and " in " in line]
                assert len(ends) == 1 and _word(code) in ends[0], (edit, lines)
        finally:
            watcher.stop()


def _word(code: int) -> str:
    return {value: key for key, value in CODES.items()}[code]


def test_keys_run_all_and_failed_then_quit_leaves_nothing(tmp_path: Path) -> None:
    tree = Tree(tmp_path / "p")
    tree.apply(("expect", "beta", "y"))  # beta fails
    watcher = Watcher(tree.root)
    try:
        watcher.cycle()
        all_ids = {r["test_id"] for r in tree.records()}
        assert len(all_ids) == 7
        count = len(tree.records())
        watcher.key("f")
        lines = watcher.cycle()
        assert any("run failed (f)" in line for line in lines)
        assert executed(tree.records()[count:]) == {("tool:beta::beta-value", "fail")}
        count = len(tree.records())
        watcher.key("a")
        lines = watcher.cycle()
        assert {r["test_id"] for r in tree.records()[count:]} == all_ids  # --force: every test, green or not
        assert any(line.startswith("  run ") and "--force" in line for line in lines)
        watcher.key("q")
        assert watcher.process.wait(LIMIT) == 0
        assert watcher.session_processes() == []
    finally:
        watcher.stop()


def test_a_broken_registry_is_one_line_and_watching_goes_on(tmp_path: Path) -> None:
    tree = Tree(tmp_path / "p")
    watcher = Watcher(tree.root)
    try:
        watcher.cycle()
        tree.apply(("break", True))
        lines = watcher.cycle()
        errors = [line for line in lines if line.startswith("oac: ")]
        assert len(errors) == 1 and "data" in errors[0] and not any("Traceback" in line for line in lines)
        tree.apply(("break", False))
        lines = watcher.cycle()
        assert any("cycle 3 passed" in line for line in lines)
    finally:
        watcher.stop()


def test_ctrl_c_leaves_nothing_running(tmp_path: Path) -> None:
    tree = Tree(tmp_path / "p")
    watcher = Watcher(tree.root)
    try:
        watcher.cycle()
        os.killpg(watcher.process.pid, signal.SIGINT)  # what a terminal's Ctrl-C sends: the whole group
        assert watcher.process.wait(LIMIT) == 130
        assert watcher.session_processes() == []
    finally:
        watcher.stop()


def test_ctrl_c_during_a_cycle_leaves_nothing_running(tmp_path: Path) -> None:
    tree = Tree(tmp_path / "p")
    watcher = Watcher(tree.root)
    try:
        watcher.cycle()
        # a mock that blocks until it is stopped (its sleep is the user code under test, not a synchronisation)
        tree._write("data.py", data_text(tree.out, tree.expect, False) + "BLOCK = True\n"
                    "def block(args):\n    import time\n    time.sleep(3600)\n")
        while True:
            line = watcher.lines.get(timeout=LIMIT)
            assert line is not None
            if line.startswith("  run 'blocks'"):  # printed as the test starts
                break
        os.killpg(watcher.process.pid, signal.SIGINT)
        assert watcher.process.wait(LIMIT) == 130
        assert watcher.session_processes() == []
    finally:
        watcher.stop()


def test_ctrl_c_during_a_re_keyed_cycle_leaves_nothing_running(tmp_path: Path) -> None:
    tree = Tree(tmp_path / "p")
    watcher = Watcher(tree.root)
    try:
        watcher.cycle()
        # a mock module only its test imports: re-keyed by the resident plan, run in the cycle's own process,
        # where it blocks until stopped (its sleep is the user code under test, not a synchronisation)
        tree._write("mockmod.py", "def value(args):\n    import time\n    time.sleep(3600)\n")
        seen = []
        while True:
            line = watcher.lines.get(timeout=LIMIT)
            assert line is not None, seen
            seen.append(line)
            if line.startswith("  run 'moduled-value'"):  # printed as the test starts
                break
        assert any(line.startswith(RESIDENT) for line in seen), seen
        os.killpg(watcher.process.pid, signal.SIGINT)
        assert watcher.process.wait(LIMIT) == 130
        assert watcher.session_processes() == []
    finally:
        watcher.stop()
