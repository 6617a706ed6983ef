"""The key's completeness as a property (issue 15): for every named key part, every kind of test and every
kind of user code — change exactly the input that feeds it, and the test's key changes and `--explain` (which
prints `KeyParts.changes_since`) names that part.

Each row: (what changes, the test, the edit or run setting, the part `--explain` must name, parts that may move
with it because the same input feeds them too). Plans are built in process, as `oac test` builds them.
"""

from collections.abc import Callable
from pathlib import Path

import pytest

from engine_project import Project
from guard_project import guard_project
from open_agent_compiler.tasks import build_options
from open_agent_compiler.tasks.graph import TestPlan, retire
from open_agent_compiler.keys.key import KeyParts

TOOL, HANDLER, EVALUATED, JUDGED = ("tool:mocked::mock-test", "tool:handled::handler-test",
                                    "tool:evaluated::evaluator-test", "tool:judged::judge-test")
CAPABILITY, AGENT = "capability:primary::capability-test", "agent:primary::agent-test"
KINDS_OF_TEST = {"tool": TOOL, "capability": CAPABILITY, "agent": AGENT}
SCRIPTED = {"invoker": "scripted"}


def edit(path: str, old: str, new: str) -> Callable[[Project], None]:
    return lambda proj: proj.edit(path, old, new)


def write(path: str, text: str) -> Callable[[Project], None]:
    return lambda proj: proj.write(path, text)


def setting(**options: object) -> dict[str, object]:
    return options


AGENTS = "agents.py"
ROWS: list[tuple[str, str, Callable[[Project], None] | None, dict, dict, str, set[str]]] = [
    # (what, test, edit, options before, options after, part named, parts allowed to move with it)
    *[(f"engine schema ({kind})", test, None, {}, {"schema": "oac-results/next"}, "schema", set())
      for kind, test in KINDS_OF_TEST.items()],
    *[(f"test definition ({kind})", test, edit(AGENTS, 'DESC = "d"', 'DESC = "e"'), {}, {}, "definition", set())
      for kind, test in KINDS_OF_TEST.items()],
    ("tool definition (tool test)", TOOL, edit(AGENTS, 'TOOL_DESC = "mocked"', 'TOOL_DESC = "other"'), {}, {},
     "target", set()),
    # the factory read the prompt: its part moves too, in tests that run project code
    ("compiled agent (capability)", CAPABILITY, write("prompts/system.md", "Another prompt.\n"), {}, {}, "target",
     {"factory"}),
    ("compiled agent (agent)", AGENT, write("prompts/system.md", "Another prompt.\n"), SCRIPTED, SCRIPTED, "target",
     {"factory"}),
    *[(f"model ({kind})", test, edit(AGENTS, 'MODEL = "test/model-a"', 'MODEL = "test/model-b"'), {}, {}, "model",
       {"target"}) for kind, test in (("capability", CAPABILITY), ("agent", AGENT))],
    ("mock output (tool test)", EVALUATED, edit(AGENTS, 'FIXED = {"n": 1}', 'FIXED = {"n": 2}'), {}, {}, "mocks",
     {"target"}),
    ("a reachable tool's mock (agent)", AGENT, edit(AGENTS, 'FIXED = {"n": 1}', 'FIXED = {"n": 2}'), SCRIPTED,
     SCRIPTED, "mocks", {"target"}),
    ("a reachable tool's input_schema (agent)", AGENT, edit(AGENTS, '"q": {"type": "string"}', '"q": {"type": "integer"}'),
     SCRIPTED, SCRIPTED, "mocks", {"target"}),
    ("access profile (tool test)", TOOL, edit(AGENTS, "ACCESS = None", 'ACCESS = "ro"'), {}, {}, "access_profile",
     {"definition"}),
    *[(f"variant ({kind})", test, None, {}, {"variant": "v2"}, "variant", {"target"})
      for kind, test in KINDS_OF_TEST.items()],
    *[(f"dialect ({kind})", test, None, SCRIPTED if kind == "agent" else {},
       {"dialect": "claude", **(SCRIPTED if kind == "agent" else {})}, "dialect", {"target"})
      for kind, test in (("capability", CAPABILITY), ("agent", AGENT))],
    ("hermetic (real handler)", HANDLER, None, {}, {"hermetic": True}, "hermetic", set()),
    ("invoker (agent)", AGENT, None, SCRIPTED, {"invoker": "invmod:make"}, "invoker", set()),
    # every kind of user code
    ("factory: a module it imports (capability)", CAPABILITY, edit("factory_helper.py", "N = 1", "N = 2"), {}, {},
     "target", set()),
    ("factory: a file it reads (agent)", AGENT, write("prompts/system.md", "Edited.\n"), SCRIPTED, SCRIPTED, "target",
     {"factory"}),
    ("factory: a file it reads into a global (tool test)", TOOL, write("data/settings.txt", "t\n"), {}, {},
     "factory", set()),
    ("mock: its module (tool test)", TOOL, edit("mockmod.py", "# FAULT mock", "# edited"), {}, {}, "file mockmod.py",
     set()),
    ("mock: its module (agent)", AGENT, edit("mockmod.py", "# FAULT mock", "# edited"), SCRIPTED, SCRIPTED,
     "file mockmod.py", set()),
    ("handler: its script", HANDLER, edit("handlers/handled.py", "# FAULT handler", "# edited"), {}, {},
     "file handlers/handled.py", set()),
    ("evaluator: its module (tool test)", EVALUATED, edit("evals.py", "# FAULT evaluator", "# edited"), {}, {},
     "file evals.py", set()),
    ("evaluator: its module (capability)", CAPABILITY, edit("evals.py", "# FAULT evaluator", "# edited"), {}, {},
     "file evals.py", set()),
    ("evaluator: a module it imports (capability)", CAPABILITY, edit("evaluator_helper.py", "N = 1", "N = 2"), {}, {},
     "file evaluator_helper.py", set()),
    ("script: its module", AGENT, edit("scripts_mod.py", "# FAULT script", "# edited"), SCRIPTED, SCRIPTED,
     "invoker", set()),
    ("script: a module it imports", AGENT, edit("script_helper.py", "N = 1", "N = 2"), SCRIPTED, SCRIPTED,
     "invoker", set()),
    ("judge: its module", JUDGED, edit("judgemod.py", "# FAULT judge", "# edited"), {"judge": "judgemod:make"},
     {"judge": "judgemod:make"}, "judge", set()),
    ("judge: a module it imports", JUDGED, edit("judge_helper.py", "N = 1", "N = 2"), {"judge": "judgemod:make"},
     {"judge": "judgemod:make"}, "judge", set()),
    ("invoker: its module", AGENT, edit("invmod.py", "# FAULT invoker", "# edited"), {"invoker": "invmod:make"},
     {"invoker": "invmod:make"}, "invoker", set()),
    ("invoker: a module it imports", AGENT, edit("invoker_helper.py", "N = 1", "N = 2"), {"invoker": "invmod:make"},
     {"invoker": "invmod:make"}, "invoker", set()),
    ("declared input: its content", EVALUATED, write("docs/a.txt", "b\n"), {}, {}, "file docs/a.txt", set()),
    ("declared input: a new match", EVALUATED, write("docs/b.txt", "b\n"), {}, {}, "inputs docs/*.txt",
     {"file docs/b.txt"}),
    ("declared input: a test's own (capability)", CAPABILITY, write("notes/n.md", "m\n"), {}, {},
     "file notes/n.md", set()),
    ("declared input: a reachable tool's (agent)", AGENT, write("docs/a.txt", "b\n"), SCRIPTED, SCRIPTED,
     "file docs/a.txt", set()),
]


def parts(proj: Project, test_id: str, options: dict, monkeypatch: pytest.MonkeyPatch) -> KeyParts:
    options = dict(options)
    schema = options.pop("schema", None)
    if schema is not None:
        monkeypatch.setattr("open_agent_compiler.keys.key.ENGINE_SCHEMA", schema)
    monkeypatch.chdir(proj.root)
    plan = TestPlan(build_options(proj.root, {"factory": "agents:registry", "config": "prod", **options}))
    try:
        return plan.parts_of(test_id)
    finally:
        retire(plan.run_id)


@pytest.mark.parametrize(("what", "test", "change", "before", "after", "named", "also"), ROWS,
                         ids=[row[0] for row in ROWS])
def test_changing_one_input_changes_the_key_and_explain_names_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, what: str, test: str, change: Callable | None,
        before: dict, after: dict, named: str, also: set[str]) -> None:
    proj = guard_project(tmp_path / "keys")
    old = parts(proj, test, before, monkeypatch)
    assert parts(proj, test, before, monkeypatch).key() == old.key()  # nothing changed: the same key
    if change is not None:
        change(proj)
    new = parts(proj, test, after, monkeypatch)
    changed = new.changes_since(old.model_dump(mode="json"))
    assert new.key() != old.key()
    assert named in changed, changed
    assert set(changed) - {named} <= also, changed  # exactly that input's parts, nothing unrelated


def test_every_named_key_part_has_a_row() -> None:
    named = {row[5].split(" ")[0] if row[5].startswith(("file ", "inputs ")) else row[5] for row in ROWS}
    fields = {"schema" if name == "schema_version" else name for name in KeyParts.model_fields}
    assert fields - {"files"} <= named and {"file", "inputs"} <= named
