"""Test keys: what changes a key, what must not, and each file read once per run."""

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from open_agent_compiler import (
    AgentDefinition, AgentHeader, AgentRegistry, CompilationConfig, EqualsEvaluator, MockProfile, MockResponse,
    ModelParameters, TemplateSlot, TemplateTree, ToolDefinition, ToolDefinitionHeader, ToolTest,
)
from open_agent_compiler.testing.discovery import discover
from open_agent_compiler.keys.key import FileDigests, key_parts


def build(tmp_path: Path, *, ci_a: str = "A", ci_b: str = "B", expected: str = "A", spec: str = "mockmod:fn",
          model: str = "p/m") -> dict[str, str]:
    tool_a = ToolDefinition(
        header=ToolDefinitionHeader(name="a", description="a"),
        tool_tests=[ToolTest(name="ta", input={}, mock_profile="ci", evaluators=(EqualsEvaluator(expected=expected),))],
    )
    tool_b = ToolDefinition(
        header=ToolDefinitionHeader(name="b", description="b"), mock=MockResponse(kind="callable", callable_spec=spec),
        tool_tests=[ToolTest(name="tb", input={})],
    )
    agent = AgentDefinition(header=AgentHeader(agent_id="x", name="x"), extra_tools=[tool_a, tool_b])
    reg = AgentRegistry()
    reg.register_agent("x", agent, ModelParameters(model_name=model))
    reg.register_template(TemplateTree(name="t", slots=[TemplateSlot(name="primary", default_agent_id="x")]))
    reg.create_compilation_config(CompilationConfig(name="c", template_name="t"))
    reg.register_mock_profile(MockProfile(name="ci", responses={"a": MockResponse(fixed_output=ci_a),
                                                                 "b": MockResponse(fixed_output=ci_b)}))
    resolved = reg.resolve_config("c")
    files = FileDigests(tmp_path)
    return {case.test_id: key_parts(case, resolved=resolved, files=files, artifact_digests={}, dialect="opencode",
                                     variant=None).key() for case in discover(resolved)}


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "mockmod.py").write_text("def fn(payload):\n    return 1\n")
    return tmp_path


def test_only_the_reachable_mock_entry_counts(project: Path) -> None:
    base = build(project)
    other_entry = build(project, ci_b="B2")  # profile entry of tool b: test `ta` cannot reach it
    assert other_entry["tool:a::ta"] == base["tool:a::ta"]
    own_entry = build(project, ci_a="A2")
    assert own_entry["tool:a::ta"] != base["tool:a::ta"]


def test_definition_and_mock_module_contents_change_keys(project: Path) -> None:
    base = build(project)
    assert build(project, expected="other")["tool:a::ta"] != base["tool:a::ta"]
    (project / "mockmod.py").write_text("def fn(payload):\n    return 2\n")
    changed = build(project)
    assert changed["tool:b::tb"] != base["tool:b::tb"] and changed["tool:a::ta"] == base["tool:a::ta"]


def test_tool_test_keys_ignore_the_agent_model(project: Path) -> None:
    assert build(project, model="p/other") == build(project)


def test_each_file_is_read_once_per_run(project: Path, monkeypatch) -> None:
    reads: list[Path] = []
    original = Path.read_bytes

    def counting(self: Path) -> bytes:
        reads.append(self)
        return original(self)

    monkeypatch.setattr(Path, "read_bytes", counting)
    files = FileDigests(project)
    for _ in range(5):
        files("mockmod.py")
        files(project / "mockmod.py")
    assert len(reads) == 1
    assert files("missing.py") == "missing"


def test_a_key_covers_the_code_that_judges_the_test(tmp_path: Path, monkeypatch) -> None:
    """A pass earned by another version of the read-back, runner or evaluators is not green for this one: the
    code's fingerprint is part of every key (`schema`), and of the key cache's scope."""
    from open_agent_compiler.keys import key as keys_module

    before = build(tmp_path)
    real = keys_module.source_fingerprint
    monkeypatch.setattr(keys_module, "source_fingerprint", lambda *packages: "other code " + real(*packages))
    after = build(tmp_path)
    assert before.keys() == after.keys() and all(before[test_id] != after[test_id] for test_id in before)


def test_discovered_files_and_folder_listings_are_key_parts(project: Path) -> None:
    """What a test's last pass read (a depfile: files, and folders whose listing it read) is in its key."""
    (project / "data").mkdir()
    (project / "data" / "a.txt").write_text("a")
    (project / "helper.py").write_text("N = 1\n")
    tool = ToolDefinition(header=ToolDefinitionHeader(name="t", description="t"), mock=MockResponse(fixed_output=1),
                          tool_tests=[ToolTest(name="tt", input={})])
    agent = AgentDefinition(header=AgentHeader(agent_id="x", name="x"), extra_tools=[tool])
    reg = AgentRegistry()
    reg.register_agent("x", agent)
    reg.register_template(TemplateTree(name="t", slots=[TemplateSlot(name="primary", default_agent_id="x")]))
    reg.create_compilation_config(CompilationConfig(name="c", template_name="t"))
    resolved = reg.resolve_config("c")
    (case,) = discover(resolved)
    discovered = [str(project / "data") + "/", str(project / "helper.py")]

    def parts():
        return key_parts(case, resolved=resolved, files=FileDigests(project), artifact_digests={},
                         dialect="opencode", variant=None, discovered=discovered)

    before = parts()
    assert set(before.files) == {"data/", "helper.py"}
    (project / "data" / "b.txt").write_text("b")  # the listing changed
    listed = parts()
    assert listed.key() != before.key() and listed.changes_since(before.model_dump(mode="json")) == ["folder data/"]
    (project / "helper.py").write_text("N = 2\n")
    assert parts().changes_since(listed.model_dump(mode="json")) == ["file helper.py"]


def test_a_project_evaluator_of_a_turn_is_keyed_on_its_source(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Turn-level evaluators decide an agent test as much as test-level ones: their project source is in the key."""
    import importlib
    import sys

    from open_agent_compiler import AgentTest
    from open_agent_compiler.model.core.test_model import Turn
    from open_agent_compiler.usercode import project_imports

    (project / "turn_evals.py").write_text(
        "from typing import Literal\nfrom open_agent_compiler.model.core.evaluator import Evaluator\n\n"
        "class TurnCheck(Evaluator):\n    kind: Literal['turn-check'] = 'turn-check'\n\n"
        "    def evaluate(self, context):\n        return self.result(True, 'ok')\n")
    project_imports.install(project)
    monkeypatch.syspath_prepend(str(project))
    monkeypatch.delitem(sys.modules, "turn_evals", raising=False)
    check = importlib.import_module("turn_evals").TurnCheck()
    test = AgentTest(name="two", turns=(Turn(prompt="a"), Turn(prompt="b", evaluators=(check,))))
    agent = AgentDefinition(header=AgentHeader(agent_id="x", name="x"), agent_tests=[test])
    reg = AgentRegistry()
    reg.register_agent("x", agent)
    reg.register_template(TemplateTree(name="t", slots=[TemplateSlot(name="primary", default_agent_id="x")]))
    reg.create_compilation_config(CompilationConfig(name="c", template_name="t"))
    resolved = reg.resolve_config("c")
    (case,) = [case for case in discover(resolved) if case.kind == "agent"]

    def parts():
        return key_parts(case, resolved=resolved, files=FileDigests(project), artifact_digests={},
                         dialect="opencode", variant=None)

    before = parts()
    assert "turn_evals.py" in before.files
    (project / "turn_evals.py").write_text((project / "turn_evals.py").read_text() + "# edited\n")
    assert parts().changes_since(before.model_dump(mode="json")) == ["file turn_evals.py"]


def test_the_judge_is_part_of_the_key_of_every_test_it_judges_and_of_no_other(tmp_path: Path) -> None:
    """An llm_judge on the test itself or on one of an agent test's turns puts the judge in the key."""
    from open_agent_compiler.model.core.test_model import AgentTest, CapabilityTest, Turn
    from open_agent_compiler.testing.evaluators.llm_judge import LLMJudgeEvaluator

    judged = LLMJudgeEvaluator(criteria="polite")
    agent = AgentDefinition(header=AgentHeader(agent_id="x", name="x"), capability_tests=[
        CapabilityTest(name="cap-judged", evaluators=(judged,)), CapabilityTest(name="cap-plain")],
        agent_tests=[AgentTest(name="turn-judged", turns=(Turn(prompt="hi"), Turn(prompt="bye", evaluators=(judged,)))),
                     AgentTest(name="turns-plain", turns=(Turn(prompt="hi"),)),
                     AgentTest(name="prompt-judged", prompt="hi", evaluators=(judged,))])
    reg = AgentRegistry()
    reg.register_agent("x", agent)
    reg.register_template(TemplateTree(name="t", slots=[TemplateSlot(name="primary", default_agent_id="x")]))
    reg.create_compilation_config(CompilationConfig(name="c", template_name="t"))
    resolved = reg.resolve_config("c")
    files = FileDigests(tmp_path)

    def judges(judge: str) -> dict[str, str | None]:
        return {case.name: key_parts(case, resolved=resolved, files=files, artifact_digests={}, dialect="opencode",
                                     variant=None, judge=judge).judge for case in discover(resolved)}

    assert judges("j1") == {"cap-judged": "j1", "cap-plain": None, "turn-judged": "j1", "turns-plain": None,
                            "prompt-judged": "j1"}


def test_the_model_digest_is_the_model_parameters_digest_once_per_object() -> None:
    """Capability tests of one agent share its model parameters' digest (computed once per object): an equal
    object gives the same digest, another model another one, and a reused object id is never served stale."""
    from open_agent_compiler.model.core.agent import ModelParameters
    from open_agent_compiler.model.hashing import digest
    from open_agent_compiler.keys.key import model_digest

    first = ModelParameters(model_name="provider/a", temperature=0.0)
    assert model_digest(first) == model_digest(first) == digest(first)
    assert model_digest(ModelParameters(model_name="provider/a", temperature=0.0)) == digest(first)
    for temperature in (0.1, 0.2, 0.3):  # short-lived objects: ids are reused, answers must not be
        other = ModelParameters(model_name="provider/b", temperature=temperature)
        assert model_digest(other) == digest(other) != digest(first)


def test_every_key_shares_one_schema_string(project: Path) -> None:
    """The schema part is the same text for every test of a run: one string, not one per test (cold peak RSS)."""
    from open_agent_compiler.keys.key import KeyParts

    first, second = KeyParts(definition="a", target="t"), KeyParts(definition="b", target="t")
    assert first.schema_version == second.schema_version and first.schema_version is second.schema_version


@pytest.mark.parametrize("given", [
    {"definition": "d", "target": "t"},
    {"definition": "d", "target": "t", "files": {"a.py": "x", "module m": "missing"}, "hermetic": False},
    {"definition": "d", "target": "t", "model": "m", "mocks": "k", "access_profile": "p", "variant": "v",
     "dialect": "opencode", "invoker": "i", "judge": "j", "hermetic": True, "schema_version": "s"},
])
def test_packed_key_parts_unpack_to_the_same_parts(given: dict) -> None:
    """A plan holds a test's parts packed (cold peak RSS): unpacked, they are the same parts, field by field,
    with the same fields set, JSON, key and `--explain` answer, and still frozen."""
    from open_agent_compiler.keys.key import FILES_AT, KeyParts

    parts = KeyParts(**given)
    packed = parts.packed()
    again = KeyParts.unpacked(packed)
    assert again == parts and again.__dict__ == parts.__dict__ and list(again.__dict__) == list(parts.__dict__)
    assert again.model_fields_set == parts.model_fields_set
    assert again.model_dump(mode="json") == parts.model_dump(mode="json") and again.key() == parts.key()
    assert again.changes_since(parts.model_dump(mode="json")) == []
    assert packed[FILES_AT] is parts.files
    with pytest.raises(Exception):
        again.definition = "other"  # type: ignore[misc]


_TEXT = st.text(max_size=8)


@settings(max_examples=200, deadline=None)
@given(definition=_TEXT, target=_TEXT, optional=st.dictionaries(
    st.sampled_from(["model", "mocks", "access_profile", "variant", "dialect", "invoker", "judge"]),
    st.one_of(st.none(), _TEXT)), schema=st.one_of(st.none(), _TEXT), files=st.dictionaries(_TEXT, _TEXT, max_size=4),
    hermetic=st.one_of(st.none(), st.booleans()))
def test_the_key_and_the_saved_view_are_pydantics(definition: str, target: str, optional: dict, schema: str | None,
                                                   files: dict, hermetic: bool | None) -> None:
    """`key()` digests the field values without pydantic's serializer, and `json_view()` (the parts saved for
    `--explain`) is `model_dump(mode="json")` without it: the same digest, the same dict in the same order, for
    fresh and for unpacked parts."""
    import json

    from open_agent_compiler.model.hashing import digest_model
    from open_agent_compiler.keys.key import KeyParts

    if schema is not None:
        optional["schema_version"] = schema
    parts = KeyParts(definition=definition, target=target, files=files, hermetic=hermetic, **optional)
    for each in (parts, KeyParts.unpacked(parts.packed())):
        assert each.key() == digest_model(each)
        view, dumped = each.json_view(), each.model_dump(mode="json")
        assert view == dumped and list(view) == list(dumped) and json.dumps(view) == json.dumps(dumped)
        assert view["files"] is not each.files  # a copy: what is saved is not the parts' own dict
        held = KeyParts.packed_view(each.packed())  # what a test action saves from the plan's packed parts
        assert held == dumped and list(held) == list(dumped) and held["files"] is not each.files


def test_paths_are_resolved_and_labelled_as_pathlib_does(tmp_path: Path) -> None:
    """FileDigests resolves with `os.path.realpath` and labels by text: the same answers as
    `(root / path).resolve()` and `relative_to(root).as_posix()` (else the absolute path), folder slash kept."""
    root = tmp_path / "project"
    (root / "pkg" / "deep").mkdir(parents=True)
    (root / "pkg" / "mod.py").write_text("x = 1\n")
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "lib.py").write_text("y = 2\n")
    (root / "link_out").symlink_to(outside)
    (root / "link_in").symlink_to(root / "pkg")
    (root / "dangling").symlink_to(root / "nowhere")
    via_link = tmp_path / "alias"
    via_link.symlink_to(root)

    def pathlib_label(base: Path, path: str) -> str:
        full = (base / path).resolve()
        try:
            label = full.relative_to(base.resolve()).as_posix()
        except ValueError:
            label = full.as_posix()
        return label + "/" if path.endswith("/") else label

    paths = ["pkg/mod.py", "./pkg/../pkg/mod.py", "pkg/", "pkg/deep/", "link_out/lib.py", "link_in/mod.py",
             "dangling", "missing.py", "../elsewhere/lib.py", str(outside / "lib.py"), str(root / "pkg" / "mod.py"),
             "", ".", "pkg//mod.py", "/", str(root) + "/"]
    for base in (root, via_link):
        files = FileDigests(base)
        for path in paths:
            assert files.label(path) == pathlib_label(base, path), (base, path)
            if not path.endswith("/") and (base / path).resolve().is_file():
                assert files(path) == FileDigests(base)(Path((base / path).resolve()))
    assert FileDigests(root)("link_out/lib.py") == FileDigests(outside)("lib.py")
    assert FileDigests(root)("dangling") == "missing"
    assert FileDigests(Path("/")).label("/etc/") == "etc/"
