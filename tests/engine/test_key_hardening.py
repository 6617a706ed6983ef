"""No stale green: everything a test loads or runs is in its key (issue 10 §1, §7)."""

import json
import os
import py_compile
import sqlite3

import pytest

from engine_project import ONE_AGENT, SUMMARY, Project, summary_line
from open_agent_compiler.model.hashing import digest

AGENTS = '''
from open_agent_compiler import (
    AgentDefinition, AgentHeader, AgentRegistry, CompilationConfig, EqualsEvaluator, MockResponse,
    TemplateSlot, TemplateTree, ToolDefinition, ToolDefinitionHeader, ToolTest,
)
from evals import AtLeast


def tool(name, test_name, evaluators, **kw):
    return ToolDefinition(header=ToolDefinitionHeader(name=name, description=name), **kw,
                          tool_tests=[ToolTest(name=test_name, input={}, evaluators=evaluators)])


def callable_mock(spec):
    return MockResponse(kind="callable", callable_spec=spec)


def registry():
    n1 = (EqualsEvaluator(field="n", expected=1),)
    return one_agent([
        tool("real", "handler-import", n1, handler_script="handlers/real.py"),
        tool("mocked", "mock-import", n1, mock=callable_mock("mockmod:answer")),
        tool("judged", "custom-evaluator", (AtLeast(),), mock=MockResponse(fixed_output={"n": 5})),
        tool("stepped", "nested-callable", n1,
             mock=MockResponse(kind="sequence", sequence=(callable_mock("seqmod:first"),))),
        tool("later", "module-written-later", n1, mock=callable_mock("later:answer")),
        tool("exiter", "mock-exits", n1, mock=callable_mock("exiter:answer")),
        tool("spaced", "name with a space", n1, mock=MockResponse(fixed_output={"n": 1})),
    ])
''' + ONE_AGENT

FILES = {
    "agents.py": AGENTS,
    "handlers/real.py": '''
        from pydantic import BaseModel
        from open_agent_compiler import ScriptTool
        import helper


        class Empty(BaseModel):
            pass


        class N(BaseModel):
            n: int


        class Real(ScriptTool[Empty, N]):
            name = "real"

            def execute(self, input):
                return N(n=helper.value())
    ''',
    "helper.py": "def value():\n    return 1\n",
    "mockmod.py": "import mockhelper\n\n\ndef answer(payload):\n    return {'n': mockhelper.N}\n",
    "mockhelper.py": "N = 1\n",
    "evals.py": '''
        from typing import Literal
        from open_agent_compiler.model.core.evaluator import Evaluator
        import thresholds


        class AtLeast(Evaluator):
            kind: Literal["at-least"] = "at-least"

            def evaluate(self, context):
                n = context.target["n"]
                return self.result(n >= thresholds.MIN, f"n={n}, min={thresholds.MIN}")
    ''',
    "thresholds.py": "MIN = 3\n",
    "seqmod.py": "def first(payload):\n    return {'n': 1}\n",
    "exiter.py": "import sys\n\n\ndef answer(payload):\n    sys.exit(0)\n",
}


@pytest.fixture
def proj(tmp_path) -> Project:
    return Project.of(tmp_path / "hard", FILES)


def run(proj: Project, name: str, *extra: str, code: int | None = None) -> str:
    done = proj.test("--filter", name, *extra, code=code)
    return summary_line(done.stdout) + "\n" + done.stdout


@pytest.mark.parametrize(("test", "dependency", "old", "new"), [
    ("handler-import", "helper.py", "return 1", "return 2"),
    ("mock-import", "mockhelper.py", "N = 1", "N = 2"),
    ("custom-evaluator", "thresholds.py", "MIN = 3", "MIN = 9"),
    ("custom-evaluator", "evals.py", "n >= thresholds.MIN", "n > 100"),
    ("nested-callable", "seqmod.py", "'n': 1", "'n': 3"),
])
def test_editing_what_a_test_imports_reruns_it(proj: Project, test: str, dependency: str, old: str, new: str) -> None:
    assert run(proj, test, code=0).startswith(SUMMARY.format(1, 1, 0, 0, 0))
    assert run(proj, test, code=0).startswith(SUMMARY.format(1, 0, 0, 1, 0))  # green: skipped
    proj.edit(dependency, old, new)
    out = run(proj, test, "--explain", code=1)
    assert out.startswith(SUMMARY.format(1, 0, 1, 0, 0)), out
    assert f"file {dependency}" in out  # --explain names the changed file


def test_a_mock_module_the_registry_imported_first_still_keys_its_imports(proj: Project) -> None:
    proj.edit("agents.py", "from evals import AtLeast\n", "from evals import AtLeast\nimport mockmod  # loaded at registry time\n")
    assert run(proj, "mock-import", code=0).startswith(SUMMARY.format(1, 1, 0, 0, 0))
    assert run(proj, "mock-import", code=0).startswith(SUMMARY.format(1, 0, 0, 1, 0))
    proj.edit("mockhelper.py", "N = 1", "N = 2")
    assert run(proj, "mock-import", code=1).startswith(SUMMARY.format(1, 0, 1, 0, 0))


def test_a_same_second_same_size_edit_runs_the_new_source(proj: Project) -> None:
    """A stale .pyc whose recorded mtime and size match the edited source must not be run."""
    assert run(proj, "mock-import", code=0).startswith(SUMMARY.format(1, 1, 0, 0, 0))
    source = proj.root / "mockhelper.py"
    stat = source.stat()
    py_compile.compile(str(source), cfile=str(proj.root / "__pycache__" / "mockhelper.cpython-311.pyc"))
    source.write_text("N = 7\n")  # same size
    os.utime(source, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    out = run(proj, "mock-import", code=1)
    assert out.startswith(SUMMARY.format(1, 0, 1, 0, 0)) and "7" in out, out


def test_a_mock_module_written_after_the_first_run_is_keyed(proj: Project) -> None:
    assert run(proj, "module-written-later", code=1).startswith(SUMMARY.format(1, 0, 1, 0, 0))
    proj.write("later.py", "def answer(payload):\n    return {'n': 1}\n")
    assert run(proj, "module-written-later", code=0).startswith(SUMMARY.format(1, 1, 0, 0, 0))
    assert run(proj, "module-written-later", code=0).startswith(SUMMARY.format(1, 0, 0, 1, 0))
    proj.edit("later.py", "'n': 1", "'n': 2")
    assert run(proj, "module-written-later", code=1).startswith(SUMMARY.format(1, 0, 1, 0, 0))


def test_hermetic_mode_is_part_of_a_real_handlers_key(proj: Project) -> None:
    assert run(proj, "handler-import", code=0).startswith(SUMMARY.format(1, 1, 0, 0, 0))
    out = run(proj, "handler-import", "--hermetic", code=1)  # not skipped: the pass needed the real handler
    assert out.startswith(SUMMARY.format(1, 0, 1, 0, 0)) and "--hermetic" in out
    # tests that answer from mocks keep their green state under --hermetic
    assert run(proj, "nested-callable", code=0).startswith(SUMMARY.format(1, 1, 0, 0, 0))
    assert run(proj, "nested-callable", "--hermetic", code=0).startswith(SUMMARY.format(1, 0, 0, 1, 0))


def test_a_mock_calling_sys_exit_is_a_failure(proj: Project) -> None:
    out = run(proj, "mock-exits", code=1)
    assert out.startswith(SUMMARY.format(1, 0, 1, 0, 0)) and "SystemExit" in out
    assert [r["status"] for r in proj.records()] == ["fail"]


def test_a_factory_calling_sys_exit_is_exit_2(proj: Project) -> None:
    proj.edit("agents.py", "def registry():\n", "def registry():\n    import sys; sys.exit(0)\n")
    done = proj.test(code=2)
    assert "sys.exit(0)" in done.stderr and done.stderr.count("\n") == 1 and "Traceback" not in done.stderr


def test_a_test_name_with_a_space(proj: Project) -> None:
    assert run(proj, "name with a space", code=0).startswith(SUMMARY.format(1, 1, 0, 0, 0))
    assert run(proj, "name with a space", code=0).startswith(SUMMARY.format(1, 0, 0, 1, 0))


def test_discovered_imports_are_saved_with_the_green_state(proj: Project) -> None:
    run(proj, "handler-import", code=0)
    run(proj, "mock-import", code=0)
    db = sqlite3.connect(proj.root / ".oac" / "doit-state.sqlite3")
    saved = {name: json.loads(imports) for name, imports in
             db.execute("select task_id, imports from doit where imports is not null")}
    assert saved["test:prod:tool:real::handler-import"] == ["handlers/real.py", "helper.py"]
    assert saved["test:prod:tool:mocked::mock-import"] == ["mockhelper.py", "mockmod.py"]
    assert not list(proj.root.rglob("*.pyc"))  # project modules run from source: no bytecode written


@pytest.mark.parametrize(("one", "other"), [
    ({"200": "ok"}, {200: "ok"}), (1, 1.0), (1, True), (0, False), ((1, 2), [1, 2]), ("1", 1),
    ({"a": (1,)}, {"a": [1]}), ({"__oac_tuple__": [1]}, (1,)), ({1, 2}, [1, 2]), (None, "None"),
])
def test_canonical_form_keeps_types(one: object, other: object) -> None:
    assert digest(one) != digest(other)
    assert digest(one) == digest(one) and digest({"x": one}) != digest({"x": other})


def test_mock_output_with_int_keys_has_its_own_key() -> None:
    from open_agent_compiler import MockResponse
    assert digest(MockResponse(fixed_output={"200": "ok"})) != digest(MockResponse(fixed_output={200: "ok"}))
    assert digest(MockResponse(fixed_output=[1])) != digest(MockResponse(fixed_output=[1.0]))


def test_capability_tests_judge_this_runs_bytes_not_the_shared_build(quickstart: Project) -> None:
    """Another run (another version) may have left other bytes in .oac/build: a capability test never reads them."""
    quickstart.test(code=0)
    agent_file = quickstart.root / ".oac/build/prod/opencode/.opencode/agents/primary.md"
    agent_file.write_text(agent_file.read_text().replace("uv run scripts/echo.py *", "rm -rf *"))
    done = quickstart.test("--variant", "v2", "--kind", "capability", code=0)  # runs them; compile up to date
    assert summary_line(done.stdout) == SUMMARY.format(2, 2, 0, 0, 0)


def test_a_sequence_step_module_the_registry_imported_first_still_keys_its_imports(proj: Project) -> None:
    """The callable inside a `sequence` mock counts like a top-level one: its module's recorded imports are the
    test's, even when the registry imported it before the test ran."""
    proj.write("seqmod.py", "import seqhelper\n\n\ndef first(payload):\n    return {'n': seqhelper.N}\n")
    proj.write("seqhelper.py", "N = 1\n")
    proj.edit("agents.py", "from evals import AtLeast\n", "from evals import AtLeast\nimport seqmod  # at registry time\n")
    assert run(proj, "nested-callable", code=0).startswith(SUMMARY.format(1, 1, 0, 0, 0))
    assert run(proj, "nested-callable", code=0).startswith(SUMMARY.format(1, 0, 0, 1, 0))
    proj.edit("seqhelper.py", "N = 1", "N = 2")
    out = run(proj, "nested-callable", "--explain", code=1)
    assert out.startswith(SUMMARY.format(1, 0, 1, 0, 0)) and "file seqhelper.py" in out, out


def test_a_test_that_stops_loading_files_is_saved_under_a_key_without_them(proj: Project) -> None:
    """A test whose last pass loaded project files, and that loads none now, is saved under a key without them
    (not over files it no longer reads); doit runs it once more (its file_dep set shrank), then it is green."""
    def saved() -> tuple[dict, str | None]:
        db = sqlite3.connect(proj.root / ".oac" / "doit-state.sqlite3")
        parts, imports = db.execute("select parts, imports from doit where task_id like '%::mock-import'").fetchone()
        db.close()
        return json.loads(parts), imports

    assert run(proj, "mock-import", code=0).startswith(SUMMARY.format(1, 1, 0, 0, 0))
    assert set(saved()[0]["files"]) == {"mockhelper.py", "mockmod.py"}
    proj.edit("agents.py", 'mock=callable_mock("mockmod:answer")', 'mock=MockResponse(fixed_output={"n": 1})')
    assert run(proj, "mock-import", code=0).startswith(SUMMARY.format(1, 1, 0, 0, 0))  # its definition changed
    assert saved() == ({**saved()[0], "files": {}}, None)
    run(proj, "mock-import", code=0)
    assert run(proj, "mock-import", code=0).startswith(SUMMARY.format(1, 0, 0, 1, 0))  # green: skipped
