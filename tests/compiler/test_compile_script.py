"""CompileScript (the programmatic compile of build scripts), variant passes and primary twins."""

from pathlib import Path

import pytest
from oac_builders import agent, team_registry

from open_agent_compiler.compiler.dialects import DIALECTS
from open_agent_compiler.compiler.script import CompileScript
from open_agent_compiler.errors import OacError
from open_agent_compiler.model.core.agent import AgentHeader
from open_agent_compiler.model.core.model_preset import ModelPreset, SamplingDefaults
from open_agent_compiler.model.core.template import CompilationConfig, TemplateSlot, TemplateTree
from open_agent_compiler.model.core.variant_spec import VariantSpec
from open_agent_compiler.model.registry import AgentRegistry
from open_agent_compiler.testing.artifacts import load_agent_artifact, load_capabilities

FAST = ModelPreset(name="fast", provider="openai", model_id="gpt-5-mini",
                   sampling=SamplingDefaults(temperature=0.1))
DEEP = ModelPreset(name="deep", provider="anthropic", model_id="claude-opus-4-1", reasoning=True,
                   sampling=SamplingDefaults(top_p=0.9))
VARIANTS = [VariantSpec(name="default", postfix="", preset=FAST),
            VariantSpec(name="deep", postfix="-deep", preset=DEEP)]


def test_writes_and_reports_written_files(tmp_path: Path) -> None:
    result = CompileScript(target=tmp_path, factory=team_registry(), config="prod").run()
    assert result.target == tmp_path and result.dialects == ("opencode",) and result.config == "prod"
    assert result.resolved_slots == ["primary", "researcher", "writer"] and not result.dry_run
    assert tmp_path / ".opencode/agents/primary.md" in result.written_files
    assert all(path.is_file() for path in result.written_files)
    again = CompileScript(target=tmp_path, factory=team_registry, config="prod").run()
    assert again.written_files == [] and tmp_path / ".opencode/agents/primary.md" in again.unchanged_files


def test_variants_compile_side_by_side_with_their_model(tmp_path: Path) -> None:
    result = CompileScript(target=tmp_path, factory=team_registry, config="prod", variants=VARIANTS,
                           dialect=["opencode", "claude"]).run()
    for name in ("primary", "researcher", "writer", "primary-deep", "researcher-deep", "writer-deep"):
        assert tmp_path / f".opencode/agents/{name}.md" in result.written_files
    fast = load_agent_artifact(tmp_path, "primary", "opencode").config
    deep = load_agent_artifact(tmp_path, "primary-deep", "opencode").config
    assert fast["model"] == "openai/gpt-5-mini" and fast["temperature"] == 0.1
    assert deep["model"] == "anthropic/claude-opus-4-1"
    assert load_agent_artifact(tmp_path, "primary-deep", "claude").config["model"] == "claude-opus-4-1"
    assert load_agent_artifact(tmp_path, "primary-deep", "claude").config["effort"] == "high"
    # subagent references follow the variant's names, so each pass delegates within itself
    assert load_capabilities(tmp_path, "primary-deep", "opencode").subagents == ("researcher-deep", "writer-deep")
    assert any("claude: agent 'primary': model 'openai/gpt-5-mini'" in w for w in result.warnings)
    assert any("variant 'deep': preset 'deep' sets top_p" in w for w in result.warnings)


def test_clean_takes_back_what_a_variant_no_longer_produces(tmp_path: Path) -> None:
    CompileScript(target=tmp_path, factory=team_registry, config="prod", variants=VARIANTS).run()
    result = CompileScript(target=tmp_path, factory=team_registry, config="prod", variants=VARIANTS[:1],
                           clean=True).run()
    assert not (tmp_path / ".opencode/agents/primary-deep.md").exists()
    assert tmp_path / ".opencode/agents/primary-deep.md" in result.removed_files
    assert (tmp_path / ".opencode/agents/primary.md").is_file()
    assert tmp_path / ".opencode/agents/primary.md" not in result.removed_files


def test_two_variants_one_postfix_is_an_error(tmp_path: Path) -> None:
    twins = [VariantSpec(name="a", postfix="-x", preset=FAST), VariantSpec(name="b", postfix="-x", preset=DEEP)]
    with pytest.raises(OacError, match="share the postfix '-x'"):
        CompileScript(target=tmp_path, factory=team_registry, config="prod", variants=twins).run()
    assert not tmp_path.exists() or not any(tmp_path.iterdir())


def test_factory_spec_and_unknown_dialect(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "regmod_cs.py").write_text(
        "import sys\nsys.path.insert(0, %r)\nfrom oac_builders import team_registry as registry\n"
        % str(Path(__file__).parent))
    result = CompileScript(target=tmp_path / "out", factory_spec="regmod_cs:registry", config="prod",
                           source_root=tmp_path / "src", dialect="pi").run()
    assert tmp_path / "out/.pi/agents/primary.md" in result.written_files
    with pytest.raises(OacError, match="unknown dialect 'nope'"):
        CompileScript(target=tmp_path, factory=team_registry, config="prod", dialect="nope")


def _twin_registry() -> AgentRegistry:
    reg = AgentRegistry()
    reg.register_agent("lead", agent("lead", subagents=[AgentHeader(agent_id="worker", name="worker")]))
    reg.register_agent("worker", agent("worker"))
    reg.register_template(TemplateTree(name="t", slots=[
        TemplateSlot(name="primary", default_agent_id="lead"),
        TemplateSlot(name="worker", default_agent_id="worker", also_compile_as_primary=True)]))
    reg.create_compilation_config(CompilationConfig(name="c", template_name="t", postfix="-v"))
    return reg


@pytest.mark.parametrize("dialect", sorted(DIALECTS))
def test_also_compile_as_primary_emits_a_primary_twin(dialect: str, tmp_path: Path) -> None:
    CompileScript(target=tmp_path, factory=_twin_registry, config="c", dialect=dialect).run()
    worker = load_agent_artifact(tmp_path, "worker-v", dialect)
    twin = load_agent_artifact(tmp_path, "worker-v-primary", dialect)
    assert twin.body == worker.body
    if dialect == "opencode":
        assert worker.config["mode"] == "subagent" and twin.config["mode"] == "primary"
    # the lead still delegates to the subagent, not to the twin
    assert load_capabilities(tmp_path, "primary-v", dialect).subagents == ("worker-v",)


def _resource_registry(mocked: bool) -> AgentRegistry:
    from open_agent_compiler.model.core.mock import MockResponse
    from oac_builders import bash_tool

    tool = bash_tool("query", "psql *").model_copy(update={"requires_resources": ["db"]})
    if mocked:
        tool = tool.model_copy(update={"mock": MockResponse(kind="fixed", fixed_output={"rows": []})})
    reg = AgentRegistry()
    reg.register_agent("a", agent("a", extra_tools=[tool]))
    reg.register_template(TemplateTree(name="t", slots=[TemplateSlot(name="primary", default_agent_id="a")]))
    reg.create_compilation_config(CompilationConfig(name="c", template_name="t"))
    return reg


def test_access_profile_checks_bindings_and_mock_only(tmp_path: Path) -> None:
    from open_agent_compiler.model.core.access_profile import AccessProfile, AccessProfileRegistry, ResourceBinding

    profiles = AccessProfileRegistry()
    profiles.register(AccessProfile(name="base", bindings={"db": ResourceBinding(kind="postgres", mock_only=True)}))
    profiles.register(AccessProfile(name="empty"))
    ok = CompileScript(target=tmp_path / "ok", factory=lambda: _resource_registry(mocked=True), config="c",
                       access_profiles=profiles, access_profile="base").run()
    assert ok.written_files
    with pytest.raises(OacError, match="mock_only resource 'db' but no mock covers it"):
        CompileScript(target=tmp_path / "bad", factory=lambda: _resource_registry(mocked=False), config="c",
                      access_profiles=profiles, access_profile="base").run()
    with pytest.raises(OacError, match="needs resource 'db', unbound in 'empty'"):
        CompileScript(target=tmp_path / "bad", factory=lambda: _resource_registry(mocked=True), config="c",
                      access_profiles=profiles, access_profile="empty").run()
    assert not (tmp_path / "bad").exists()


def test_dry_run_writes_nothing(tmp_path: Path) -> None:
    result = CompileScript(target=tmp_path / "out", factory=team_registry, config="prod", dry_run=True,
                           variants=VARIANTS).run()
    assert result.dry_run and tmp_path / "out/.opencode/agents/primary-deep.md" in result.planned_files
    assert result.written_files == []
    assert result.variants == ["default", "deep"]
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(("kwargs", "message"), [
    ({}, "exactly one of factory"),
    ({"factory": team_registry, "factory_spec": "x:y"}, "exactly one of factory"),
    ({"factory": team_registry, "native_tools": True}, "native tool shims are not supported"),
    ({"factory": team_registry, "store_url": "sqlite:///x.db"}, "no run store"),
])
def test_what_cannot_be_honoured_is_refused(tmp_path: Path, kwargs: dict, message: str) -> None:
    with pytest.raises(OacError, match=message):
        CompileScript(target=tmp_path, config="prod", **kwargs)


def test_names_passed_on_are_checked_or_reported(tmp_path: Path) -> None:
    ghost = CompileScript(target=tmp_path, factory=team_registry, config="prod", mock_profile="ghost").run()
    assert any("mock profile 'ghost' is not registered" in w for w in ghost.warnings)
    result = CompileScript(target=tmp_path, factory=team_registry, config="prod", access_profile="dev",
                           client_id="acme", clean_strategy="per_variant").run()
    assert any("access profile 'dev' not checked" in w for w in result.warnings)
    assert any("client_id 'acme'" in w for w in result.warnings)


def test_split_profile_routes_each_agent_by_model_class(tmp_path: Path) -> None:
    from open_agent_compiler.model.core.agent import ModelParameters
    from open_agent_compiler.model.core.split_profile import SplitProfile

    reg = AgentRegistry()
    reg.register_agent("lead", agent("lead", model_class="analytical",
                                     subagents=[AgentHeader(agent_id="eye", name="eye"),
                                                AgentHeader(agent_id="ack", name="ack")]))
    reg.register_agent("eye", agent("eye", model_class="vision"), ModelParameters(model_name="google/gemini-2.5"))
    reg.register_agent("ack", agent("ack", model_class="fast"))
    reg.register_template(TemplateTree(name="t", slots=[TemplateSlot(name="primary", default_agent_id="lead"),
                                                        TemplateSlot(name="eye", default_agent_id="eye"),
                                                        TemplateSlot(name="ack", default_agent_id="ack")]))
    reg.create_compilation_config(CompilationConfig(name="c", template_name="t"))
    split = SplitProfile(name="split", postfix="-split", preset=FAST, class_map={"analytical": DEEP, "fast": FAST})
    CompileScript(target=tmp_path, factory=reg, config="c", variants=[split]).run()
    model = {name: load_agent_artifact(tmp_path, f"{name}-split", "opencode").config.get("model")
             for name in ("primary", "eye", "ack")}
    assert model == {"primary": "anthropic/claude-opus-4-1", "eye": "google/gemini-2.5", "ack": "openai/gpt-5-mini"}


def test_build_and_build_variant_compile_like_the_public_package(tmp_path: Path) -> None:
    from open_agent_compiler import build, build_variant

    registry = team_registry()
    config = registry.list_configs()[0]
    build(tmp_path / "base", registry, config)
    base = {p.relative_to(tmp_path / "base").as_posix() for p in (tmp_path / "base").rglob("*.md")}
    assert base and all("-deep" not in name for name in base)
    build_variant(tmp_path / "deep", registry, config, VariantSpec(name="deep", postfix="-deep", preset=DEEP),
                  dialect="claude")
    names = {p.stem for p in (tmp_path / "deep" / ".claude" / "agents").glob("*.md")}
    assert names and all(name.endswith("-deep") for name in names)
    with pytest.raises(OacError, match="options"):
        build(tmp_path / "x", registry, config, options={"native_tools": True})


def test_a_factory_sees_the_pass_it_is_resolved_for(tmp_path: Path) -> None:
    from open_agent_compiler.model.core.compilation_context import CompilationContext, current_context

    seen: list[CompilationContext] = []

    def factory() -> AgentRegistry:
        seen.append(current_context())
        return team_registry()

    config = team_registry().list_configs()[0]
    spec = VariantSpec(name="deep", postfix="-deep", preset=DEEP, feature_flags={"beta": True})
    CompileScript(target=tmp_path, config=config, factory=factory, variants=[spec], mock_profile=None).run()
    assert seen[0].variant_name == "deep" and seen[0].flag("beta") is True and seen[0].variant_postfix == "-deep"
    assert current_context() == CompilationContext()  # restored after the pass
