"""The test-key cache and the render memo never serve a stale value: after any edit, every key a run uses
equals the key computed from scratch, and a warm run with nothing changed computes only file-dependent keys."""

import json
from pathlib import Path

import pytest

from open_agent_compiler.compiler.dialects import get_dialect
from open_agent_compiler.tasks import build_options
from open_agent_compiler.tasks.graph import TestPlan, retire
from open_agent_compiler.keys import cache as key_cache_module
from open_agent_compiler.keys import key as keys_module
from open_agent_compiler.keys.key import FileDigests, key_parts

# The registry is built from knobs.json, so edits need no module reload (and no .pyc timing games).
AGENTS = '''
import json
from pathlib import Path

from open_agent_compiler import (
    AgentDefinition, AgentHeader, AgentRegistry, BashToolPermission, CapabilityTest, CompilationConfig,
    EqualsEvaluator, MockProfile, MockResponse, ModelParameters, TemplateSlot, TemplateTree, ToolDefinition,
    ToolDefinitionHeader, ToolDefinitionLogicBash, ToolTest,
)


def tool(name, knobs, **extra):
    return ToolDefinition(
        header=ToolDefinitionHeader(name=name, description=knobs["tool_description"]),
        bash_tool=ToolDefinitionLogicBash(permission_bash=BashToolPermission(
            value="allow", allowed_commands=[f"run-{name} *"])),
        tool_tests=[ToolTest(name=f"{name}-test", input={"q": 1}, mock_profile=knobs["profile_of"].get(name),
                             evaluators=(EqualsEvaluator(field="n", expected=knobs["expected"]),))],
        **extra,
    )


def registry():
    knobs = json.loads((Path(__file__).parent / "knobs.json").read_text())
    fixed = MockResponse(kind="fixed", fixed_output={"n": 1})
    lead = AgentDefinition(
        header=AgentHeader(agent_id="lead", name="lead", description="Leads."),
        system_prompt=knobs["lead_prompt"],
        extra_tools=[tool("alpha", knobs, mock=fixed), tool("shared", knobs, mock=fixed)],
        subagents=[AgentHeader(agent_id="helper", name="helper")],
        capability_tests=[CapabilityTest(name="lead-bash", must_have_bash_patterns=tuple(knobs["lead_must"]))],
    )
    helper = AgentDefinition(
        header=AgentHeader(agent_id="helper", name="helper", description=knobs["helper_description"]),
        system_prompt="Helps.",
        extra_tools=[tool("shared", knobs, mock=fixed),
                     tool("counter", knobs, mock=MockResponse(kind="callable", callable_spec="mockmod:answer"))],
        capability_tests=[CapabilityTest(name="helper-no-write", must_not_have_permissions=("write",))],
    )
    reg = AgentRegistry()
    reg.register_agent("lead", lead, ModelParameters(model_name=knobs["model"]))
    reg.register_agent("helper", helper)
    reg.register_template(TemplateTree(name="tpl", slots=[TemplateSlot(name="primary", default_agent_id="lead"),
                                                          TemplateSlot(name="helper", default_agent_id="helper")]))
    reg.create_compilation_config(CompilationConfig(name="prod", template_name="tpl"))
    reg.register_mock_profile(MockProfile(name="ci", responses={
        "alpha": MockResponse(kind="fixed", fixed_output={"n": knobs["profile_n"]})}))
    return reg
'''

KNOBS = {
    "tool_description": "Does things.", "expected": 1, "profile_of": {"alpha": "ci"}, "lead_prompt": "Lead.",
    "lead_must": ["run-alpha *"], "helper_description": "Helps the lead.", "model": "test/model-a", "profile_n": 1,
}


@pytest.fixture
def root(tmp_path: Path) -> Path:
    project = tmp_path / "cacheproj"
    project.mkdir()
    (project / "agents.py").write_text(AGENTS)
    (project / "mockmod.py").write_text("def answer(payload):\n    return {'n': 1}\n")
    (project / "knobs.json").write_text(json.dumps(KNOBS))
    return project


def _knob(root: Path, **changes: object) -> None:
    knobs = json.loads((root / "knobs.json").read_text())
    knobs.update(changes)
    (root / "knobs.json").write_text(json.dumps(knobs))


def plan_keys(root: Path, monkeypatch: pytest.MonkeyPatch, **options: object) -> tuple[dict, dict, int]:
    """(keys the plan uses, keys computed from scratch, how many keys the plan computed itself)."""
    monkeypatch.chdir(root)
    computed = []
    real = keys_module.key_parts

    def counting(case, **kwargs):
        computed.append(case.test_id)
        return real(case, **kwargs)

    monkeypatch.setattr("open_agent_compiler.tasks.planning.key_parts", counting)
    plan = TestPlan(build_options(root, {"factory": "agents:registry", "config": "prod", **options}))
    try:
        fresh = {
            case.test_id: key_parts(case, resolved=plan.resolved, files=FileDigests(root),
                                    artifact_digests=plan.artifact_digests, dialect=plan.options.dialect,
                                    variant=plan.options.variant, factory=plan.keyer.factory).key()
            for case in plan.cases
        }
        return dict(plan.keys), fresh, len(computed)
    finally:
        retire(plan.run_id)


ALPHA, SHARED, COUNTER = "tool:alpha::alpha-test", "tool:shared::shared-test", "tool:counter::counter-test"
LEAD, HELPER = "capability:primary::lead-bash", "capability:helper::helper-no-write"

# (what is edited, the edit, the tests whose keys must change: worked out by hand from the registry above, not by
# the key code under test — the cache must serve exactly the fresh key, and the fresh key must move exactly here)
EDITS = [
    ("a tool's description (two agents reach it)", {"tool_description": "Does other things."},
     {ALPHA, SHARED, COUNTER, LEAD, HELPER}),  # every tool's definition, and both agents' files list their tools
    ("every tool test's expected value", {"expected": 2}, {ALPHA, SHARED, COUNTER}),
    ("which profile a test names", {"profile_of": {}}, {ALPHA}),
    ("a profile's entry", {"profile_n": 5}, {ALPHA}),
    ("the primary agent's prompt (its artifact)", {"lead_prompt": "Lead, differently."}, {LEAD}),
    ("a capability test", {"lead_must": ["run-alpha *", "run-shared *"]}, {LEAD}),
    ("a subagent's description (the parent's artifact lists it)", {"helper_description": "Helps a lot."},
     {LEAD, HELPER}),
    ("a model", {"model": "test/model-b"}, {LEAD}),  # only the lead has model parameters
]


@pytest.mark.parametrize(("what", "change", "expected"), EDITS, ids=[what for what, _, _ in EDITS])
def test_cached_keys_equal_fresh_keys_after_an_edit(root: Path, monkeypatch: pytest.MonkeyPatch, what: str,
                                                   change: dict, expected: set) -> None:
    before, fresh, _ = plan_keys(root, monkeypatch)
    assert before == fresh
    _knob(root, **change)
    after, fresh, _ = plan_keys(root, monkeypatch)
    assert after == fresh, what
    # COUNTER runs project code (a callable mock): what the factory read (knobs.json, edited here) is in its key
    assert {test_id for test_id in after if after[test_id] != before[test_id]} == expected | {COUNTER}, what


def test_the_cache_scope_covers_the_key_code(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Another version of the code that computes keys never reads this version's cached keys."""
    _, _, cold = plan_keys(root, monkeypatch)
    _, _, warm = plan_keys(root, monkeypatch)
    real = key_cache_module.source_fingerprint
    monkeypatch.setattr(key_cache_module, "source_fingerprint",
                        lambda *packages: "another version" + real(*packages))
    keys, fresh, upgraded = plan_keys(root, monkeypatch)
    assert keys == fresh and warm == 1 and upgraded == cold == 5


def test_warm_plan_computes_only_file_dependent_keys(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _, _, cold = plan_keys(root, monkeypatch)
    keys, fresh, warm = plan_keys(root, monkeypatch)
    assert cold == len(keys) == 5 and keys == fresh
    assert warm == 1  # the callable mock's test: its key covers mockmod.py's bytes


def test_editing_a_mock_module_changes_its_key_despite_the_cache(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    before, _, _ = plan_keys(root, monkeypatch)
    (root / "mockmod.py").write_text("def answer(payload):\n    return {'n': 2}\n")
    after, fresh, _ = plan_keys(root, monkeypatch)
    assert after == fresh
    assert {test_id for test_id in after if after[test_id] != before[test_id]} == {"tool:counter::counter-test"}


@pytest.mark.parametrize("damage", ["not json", '{"entries": [1, 2]}', '{"entries": {"x": {"tool:a::b": 3}}}'])
def test_a_damaged_cache_is_an_empty_cache(root: Path, monkeypatch: pytest.MonkeyPatch, damage: str) -> None:
    plan_keys(root, monkeypatch)
    for cache in (root / ".oac" / "key-cache").iterdir():
        cache.write_text(damage)
    keys, fresh, computed = plan_keys(root, monkeypatch)
    assert keys == fresh and computed == len(keys)


def test_variant_and_dialect_get_their_own_keys(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    plain, _, _ = plan_keys(root, monkeypatch)
    for options in ({"variant": "v2"}, {"dialect": "claude"}):
        keys, fresh, _ = plan_keys(root, monkeypatch, **options)
        assert keys == fresh and keys != plain


@pytest.mark.parametrize("dialect", ["opencode", "claude", "pi", "codex"])
def test_render_memo_gives_the_bytes_a_fresh_compile_gives(root: Path, monkeypatch: pytest.MonkeyPatch,
                                                           dialect: str) -> None:
    plan_keys(root, monkeypatch, dialect=dialect)  # fills the memo
    _knob(root, helper_description="Helps in a new way.")  # the lead's own definition is unchanged
    monkeypatch.chdir(root)
    plan = TestPlan(build_options(root, {"factory": "agents:registry", "config": "prod", "dialect": dialect}))
    try:
        spec = get_dialect(dialect)
        fresh = spec.compile(plan.resolved, source_root=root).file_map()
        assert plan.contents == fresh
        assert b"Helps in a new way." in fresh[spec.agent_path("primary")]  # the lead lists its subagent
    finally:
        retire(plan.run_id)
