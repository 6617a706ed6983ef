"""One test per key mutant that survived the last audit (issue 15, keys and tasks areas); each was checked by
breaking the code it guards (see the report)."""

import shutil
from pathlib import Path

import pytest

from engine_project import Project
from guard_project import guard_project
from open_agent_compiler.compiler.output import CompiledFile, CompiledOutput
from open_agent_compiler.model import hashing
from open_agent_compiler.tasks import build_options, planning
from open_agent_compiler.tasks.graph import TestPlan, retire, task_name
from open_agent_compiler.keys import key as keys_module
from open_agent_compiler.keys.cache import KeyCache
from open_agent_compiler.keys.key import KeyParts

AGENT = "agent:primary::agent-test"


@pytest.fixture
def proj(tmp_path: Path) -> Project:
    return guard_project(tmp_path / "surv")


def fileless(proj: Project) -> None:
    """The agent test's key then covers no file: no callable mock module, no real handler, no declared input."""
    proj.edit("agents.py", 'MockResponse(kind="callable", callable_spec="mockmod:answer")', 'MockResponse(fixed_output={"n": 1})')
    proj.edit("agents.py", '        tool("handled", "handler-test", one, handler_script="handlers/handled.py"),\n', "")
    proj.edit("agents.py", 'INPUTS = ("docs/*.txt",)', "INPUTS = ()")


def plan_of(proj: Project, monkeypatch: pytest.MonkeyPatch, **options: object) -> TestPlan:
    monkeypatch.chdir(proj.root)
    return TestPlan(build_options(proj.root, {"factory": "agents:registry", "config": "prod", **options}))


def test_a_missing_callable_mock_module_is_keyed_as_missing(proj: Project, monkeypatch: pytest.MonkeyPatch) -> None:
    (proj.root / "mockmod.py").unlink()
    plan = plan_of(proj, monkeypatch)
    try:
        assert plan.parts_of("tool:mocked::mock-test").files["module mockmod"] == "missing"
        assert plan.parts_of(AGENT).files["module mockmod"] == "missing"  # reachable from the agent test too
        assert "module mockmod" not in " ".join(plan.file_dep("tool:mocked::mock-test"))  # never a file_dep
    finally:
        retire(plan.run_id)


def test_callable_specs_are_found_inside_sequence_mocks() -> None:
    from open_agent_compiler import MockResponse
    inner = MockResponse(kind="sequence", sequence=(MockResponse(kind="callable", callable_spec="deep:f"),))
    outer = MockResponse(kind="sequence", sequence=({"n": 1}, inner, MockResponse(kind="stateful_callable",
                                                                                   callable_spec="top:g")))
    assert keys_module.callable_specs(outer) == ["deep:f", "top:g"]


@pytest.mark.parametrize("package", keys_module.JUDGING_CODE)
def test_the_engine_fingerprint_covers_the_judging_code(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                        package: str) -> None:
    copy = tmp_path / "open_agent_compiler"
    shutil.copytree(hashing.PACKAGE_ROOT, copy, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(hashing, "PACKAGE_ROOT", copy)
    hashing.source_fingerprint.cache_clear()  # read once per process: as a new process would
    try:
        before = keys_module.engine_schema()
        edited = sorted((copy / package).rglob("*.py"))[-1]
        edited.write_text(edited.read_text() + "\n# edited\n")
        hashing.source_fingerprint.cache_clear()
        assert keys_module.engine_schema() != before
    finally:
        hashing.source_fingerprint.cache_clear()


def test_the_engine_fingerprint_names_testing_and_the_loader() -> None:
    # every package below the engine (tasks, cli) decides results or keys them; the error texts do not
    below_engine = {p.name for p in hashing.PACKAGE_ROOT.iterdir() if (p / "__init__.py").exists()} - {
        "tasks", "cli", "improvement"}
    assert below_engine <= set(keys_module.JUDGING_CODE)


def test_explain_names_a_file_that_left_the_key() -> None:
    old = KeyParts(definition="d", target="t", files={"a.py": "1", "gone.py": "2", "data/": "listing:x"})
    new = KeyParts(definition="d", target="t", files={"a.py": "1"})
    assert new.changes_since(old.model_dump(mode="json")) == ["folder data/ (no longer read)",
                                                             "file gone.py (no longer read)"]
    assert old.changes_since(new.model_dump(mode="json")) == ["folder data/", "file gone.py"]


def test_the_key_cache_never_serves_a_pinned_test(proj: Project, monkeypatch: pytest.MonkeyPatch) -> None:
    """A test whose last pass recorded imports (a script importing a helper at run time) is keyed afresh even
    though the cache holds a file-less key for its unchanged scope."""
    fileless(proj)
    plan = plan_of(proj, monkeypatch, invoker="scripted")
    try:
        cache = KeyCache()
        compiled, options = plan.compiled, plan.options
        args = (plan.cases, plan.resolved, compiled.artifact_digests, options.dialect,
                (options.variant, options.hermetic))
        first = cache.keys(*args, plan.parts_of, invoker=plan.invoker_key)
        assert not plan.parts_of(AGENT).files
        assert first[AGENT] == plan.parts_of(AGENT).key()
        assert any(kept.get(AGENT) == first[AGENT] for kept in cache.kept.values())  # cached: it covers no file
        warm = KeyCache(cache.kept)
        with_files = KeyParts(definition="d", target="t", files={"helper.py": "x"})
        again = warm.keys(*args, lambda test_id: with_files if test_id == AGENT else plan.parts_of(test_id),
                          pinned={AGENT}, invoker=plan.invoker_key)
        assert again[AGENT] == with_files.key() != first[AGENT]
    finally:
        retire(plan.run_id)


def test_planning_pins_every_test_with_discovered_files(proj: Project, monkeypatch: pytest.MonkeyPatch,
                                                        tmp_path: Path) -> None:
    """The run's key step (planning.test_keys) pins the tests whose last pass recorded files: a cached file-less
    key of their unchanged scope is never served to them."""
    fileless(proj)
    plan = plan_of(proj, monkeypatch, invoker="scripted")
    try:
        cache_path = tmp_path / "key-cache.json"
        first = planning.test_keys(plan.cases, plan.resolved, plan.compiled, plan.options, plan.keyer, cache_path)
        assert not plan.parts_of(AGENT).files and first[AGENT] == plan.parts_of(AGENT).key()
        plan.keyer.rekey(AGENT, [str(proj.root / "agents.py")])  # its last pass loaded a project file
        again = planning.test_keys(plan.cases, plan.resolved, plan.compiled, plan.options, plan.keyer, cache_path)
        assert again[AGENT] == plan.parts_of(AGENT).key() != first[AGENT]
    finally:
        retire(plan.run_id)


def test_the_compile_key_covers_bytes_not_only_names() -> None:
    from open_agent_compiler.model.registry import AgentRegistry  # noqa: F401 - resolved config not needed
    one = CompiledOutput(dialect="opencode", files=(CompiledFile(path="a.md", content=b"one"),))
    two = CompiledOutput(dialect="opencode", files=(CompiledFile(path="a.md", content=b"two"),))

    class NoAgents:
        agents: tuple = ()

    assert planning.compiled_from(one, NoAgents(), "opencode").key != \
        planning.compiled_from(two, NoAgents(), "opencode").key


def test_an_agent_test_without_files_depends_on_the_compile_task(proj: Project,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    fileless(proj)
    plan = plan_of(proj, monkeypatch, invoker="scripted")
    try:
        tasks = {task.name: task for task in plan.task_dicts()}
        name = plan.names[AGENT]
        assert not plan.file_dep(AGENT)
        assert tasks[name].task_dep == [plan.compile_task]
        tool_task = tasks[plan.names["tool:evaluated::evaluator-test"]]
        assert plan.compile_task not in tool_task.task_dep
    finally:
        retire(plan.run_id)


@pytest.mark.parametrize(("one", "other"), [("a b", "a_b"), ("a/b c", "a/b_c"), ("x\ty", "x y")])
def test_task_names_of_different_tests_never_collide(one: str, other: str) -> None:
    assert task_name("prod", one) != task_name("prod", other)
    assert task_name("prod", "plain-id") == "prod:plain-id"  # readable where nothing was replaced


def test_a_folder_whose_listing_was_read_is_keyed_on_its_names(tmp_path: Path) -> None:
    from open_agent_compiler.keys.key import FileDigests
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "a.txt").write_text("a")
    folder = str(tmp_path / "data") + "/"
    before = FileDigests(tmp_path)(folder)
    assert FileDigests(tmp_path).label(folder) == "data/"
    (tmp_path / "data" / "a.txt").write_text("edited")  # content is not the listing
    assert FileDigests(tmp_path)(folder) == before
    (tmp_path / "data" / "b.txt").write_text("b")
    assert FileDigests(tmp_path)(folder) != before


def test_the_build_dir_compile_is_up_to_date_only_while_its_files_are_as_written(tmp_path: Path) -> None:
    from open_agent_compiler.tasks.build_sync import sync_build
    from open_agent_compiler.tasks.graph import CompiledCheck

    (tmp_path / ".oac").mkdir()
    build = tmp_path / ".oac" / "build"
    stamps = sync_build({"agents/a.md": b"one"}, build, {})
    check = CompiledCheck("k", build)
    assert check(None, {"compiled": "k", "files": stamps})
    assert not check(None, {"compiled": "other", "files": stamps})
    (build / "agents" / "a.md").write_bytes(b"edited by hand")  # a harness must not run from this build
    assert not check(None, {"compiled": "k", "files": stamps})
    (build / "agents" / "a.md").unlink()
    assert not check(None, {"compiled": "k", "files": stamps})


def test_a_pass_is_saved_under_the_key_of_the_files_it_loaded(proj: Project, monkeypatch: pytest.MonkeyPatch) -> None:
    """A test that loads a project file its planning key did not cover (a handler importing a helper) is saved
    under the key the next run computes from the saved imports, so the next run skips it instead of re-running."""
    plan = plan_of(proj, monkeypatch)
    try:
        test_id = "tool:evaluated::evaluator-test"
        before = plan.keys[test_id]
        plan.adopt_imports(test_id, ["agents.py"])
        assert plan.keys[test_id] == plan.parts_of(test_id).key() != before
        assert "agents.py" in plan.parts_of(test_id).files
    finally:
        retire(plan.run_id)


def test_a_pass_keeps_its_discovered_imports_in_the_state_columns_a_failure_does_not() -> None:
    """What a pass loaded is read back (saved_imports) to key the next run; without it a green test that loads a
    helper its planning key lacks would run every time."""
    import json

    from open_agent_compiler.tasks.backend import VALUES, summarise

    passed, _parts, _row = summarise({VALUES: {"status": "pass", "key": "k", "at": "t", "imports": ["helper.py"]}})
    assert (passed.green_key, json.loads(passed.imports)) == ("k", ["helper.py"])
    failed, _parts, _row = summarise({VALUES: {"status": "fail", "key": "k", "imports": ["helper.py"]}})
    assert (failed.green_key, failed.imports) == (None, None)


def test_a_file_keyed_as_missing_is_never_a_file_dep(proj: Project, monkeypatch: pytest.MonkeyPatch) -> None:
    """A discovered file deleted since is in the key as "missing"; as a doit file_dep it would fail the task."""
    plan = plan_of(proj, monkeypatch)
    try:
        test_id = "tool:evaluated::evaluator-test"
        plan.adopt_imports(test_id, ["gone.py", "agents.py"])
        assert plan.parts_of(test_id).files["gone.py"] == "missing"
        deps = plan.file_dep(test_id)
        assert str(proj.root / "agents.py") in deps and str(proj.root / "gone.py") not in deps
    finally:
        retire(plan.run_id)
