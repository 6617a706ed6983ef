"""Registry validation and config resolution: every mistake is one clear line naming the culprit."""

import pytest

from open_agent_compiler.errors import OacError, RegistryError, UnsafeNameError
from open_agent_compiler.model.core.agent import AgentDefinition, AgentHeader
from open_agent_compiler.model.core.mock import MockProfile
from open_agent_compiler.model.core.skill import SkillDefinition, WorkflowStep
from open_agent_compiler.model.core.template import CompilationConfig, TemplateSlot, TemplateTree
from open_agent_compiler.model.core.tool import (
    BashToolPermission,
    ToolDefinition,
    ToolDefinitionHeader,
    ToolDefinitionLogicBash,
)
from open_agent_compiler.model.registry import AgentRegistry


def tool(name: str, pattern: str = "echo *") -> ToolDefinition:
    return ToolDefinition(
        header=ToolDefinitionHeader(name=name, description=f"{name} tool"),
        bash_tool=ToolDefinitionLogicBash(permission_bash=BashToolPermission(allowed_commands=[pattern])),
    )


def agent(agent_id: str, **fields) -> AgentDefinition:  # type: ignore[no-untyped-def]
    return AgentDefinition(header=AgentHeader(agent_id=agent_id, name=agent_id), **fields)


def registry(*agents: AgentDefinition, slots: tuple[tuple[str, str], ...] = (("primary", "a"),)) -> AgentRegistry:
    reg = AgentRegistry()
    for definition in agents or (agent("a"),):
        reg.register_agent(definition.header.agent_id, definition)
    reg.register_template(TemplateTree(name="t", slots=[TemplateSlot(name=s, default_agent_id=a) for s, a in slots]))
    return reg


def one_line(exc: pytest.ExceptionInfo[BaseException]) -> str:
    message = str(exc.value)
    assert "\n" not in message and isinstance(exc.value, OacError)
    return message


def test_duplicates_are_rejected() -> None:
    reg = registry()
    with pytest.raises(RegistryError) as exc:
        reg.register_agent("a", agent("b"))
    assert "agent 'a_default_tNone' is already registered (same name, model and temperature)" in one_line(exc)
    with pytest.raises(RegistryError, match="template 't' is already registered"):
        reg.register_template(TemplateTree(name="t"))
    reg.create_compilation_config(CompilationConfig(name="c", template_name="t"))
    with pytest.raises(RegistryError, match="compilation config 'c' is already registered"):
        reg.create_compilation_config(CompilationConfig(name="c", template_name="t"))
    reg.register_mock_profile(MockProfile(name="ci"))
    with pytest.raises(RegistryError, match="mock profile 'ci' is already registered"):
        reg.register_mock_profile(MockProfile(name="ci"))
    with pytest.raises(RegistryError, match="template 'd' has duplicate slots: x"):
        reg.register_template(TemplateTree(name="d", slots=[TemplateSlot(name="x", default_agent_id="a")] * 2))


@pytest.mark.parametrize(
    ("config", "message"),
    [
        (CompilationConfig(name="c", template_name="nope"), "compilation config 'c' names unknown template 'nope'"),
        (CompilationConfig(name="c", template_name="t", slot_overrides={"ghost": "a"}),
         "compilation config 'c' overrides unknown slot 'ghost'"),
        (CompilationConfig(name="c", template_name="t", slot_overrides={"primary": "zed"}),
         "compilation config 'c' puts unknown agent 'zed' in slot 'primary'"),
    ],
)
def test_unknown_references_in_a_config(config: CompilationConfig, message: str) -> None:
    with pytest.raises(RegistryError) as exc:
        registry().create_compilation_config(config)
    assert message in one_line(exc)


def test_template_default_naming_an_unknown_agent() -> None:
    reg = registry(slots=(("primary", "a"), ("helper", "missing")))
    with pytest.raises(RegistryError) as exc:
        reg.create_compilation_config(CompilationConfig(name="c", template_name="t"))
    assert "template 't' slot 'helper' names unknown agent 'missing'" in one_line(exc)


def test_unknown_config_and_lookups_list_what_is_known() -> None:
    reg = registry()
    with pytest.raises(RegistryError, match="unknown compilation config 'x'; known: none"):
        reg.resolve_config("x")
    with pytest.raises(RegistryError, match="unknown agent 'x'; registered: a_default_tNone"):
        reg.registered_agent("x")
    assert reg.get_agent("x") is None


def test_subagent_that_fills_no_slot() -> None:
    reg = registry(agent("a", subagents=[AgentHeader(agent_id="b", name="b")]), agent("b"))
    reg.create_compilation_config(CompilationConfig(name="c", template_name="t"))
    with pytest.raises(RegistryError) as exc:
        reg.resolve_config("c")
    assert "subagent 'b' of slot 'primary' fills no slot in template 't'" in one_line(exc)


def test_subagent_that_fills_several_slots() -> None:
    reg = registry(agent("a", subagents=[AgentHeader(agent_id="b", name="b")]), agent("b"),
                   slots=(("primary", "a"), ("x", "b"), ("y", "b")))
    reg.create_compilation_config(CompilationConfig(name="c", template_name="t"))
    with pytest.raises(RegistryError, match=r"subagent 'b' of slot 'primary' fills several slots \(x, y\)"):
        reg.resolve_config("c")


def test_two_different_tools_with_one_name() -> None:
    skill = SkillDefinition(name="s", description="d",
                            workflow_steps=[WorkflowStep(header="go", tools_used=[tool("echo", "echo other *")])])
    reg = registry(agent("a", extra_tools=[tool("echo")], skills=[skill]))
    reg.create_compilation_config(CompilationConfig(name="c", template_name="t"))
    with pytest.raises(RegistryError) as exc:
        reg.resolve_config("c")
    message = one_line(exc)
    assert "two different tools are named 'echo'" in message
    assert "slot 'primary' extra_tools" in message and "skill 's' step 'go'" in message


def test_same_tool_twice_is_fine_and_kept_once() -> None:
    step = WorkflowStep(header="go", tools_used=[tool("echo")])
    skill = SkillDefinition(name="s", description="d", workflow_steps=[step])
    reg = registry(agent("a", extra_tools=[tool("echo")], skills=[skill]))
    reg.create_compilation_config(CompilationConfig(name="c", template_name="t"))
    assert [r.tool.name for r in reg.resolve_config("c").agents[0].tools] == ["echo"]


def test_postfix_makes_compiled_names() -> None:
    reg = registry(agent("a", subagents=[AgentHeader(agent_id="b", name="b")]), agent("b"),
                   slots=(("primary", "a"), ("helper", "b")))
    reg.create_compilation_config(CompilationConfig(name="c", template_name="t", postfix="-dev"))
    resolved = reg.resolve_config("c")
    assert [a.compiled_name for a in resolved.agents] == ["primary-dev", "helper-dev"]
    assert resolved.agent("primary").subagents == ("helper-dev",) and resolved.agent("primary").primary


HOSTILE = ["..", "../x", "a/b", "/abs", "a\\b", "nul\x00", "", " lead", "new\nline", "~home", "-dash", "x" * 200]


@pytest.mark.parametrize("name", HOSTILE)
def test_hostile_slot_names(name: str) -> None:
    reg = AgentRegistry()
    with pytest.raises(UnsafeNameError) as exc:
        reg.register_template(TemplateTree(name="t", slots=[TemplateSlot(name=name, default_agent_id="a")]))
    assert "unsafe slot name" in one_line(exc)


@pytest.mark.parametrize("name", HOSTILE)
def test_hostile_agent_names_and_ids(name: str) -> None:
    with pytest.raises(UnsafeNameError, match="unsafe agent name"):
        AgentRegistry().register_agent(name, agent("ok"))
    with pytest.raises(UnsafeNameError, match="unsafe agent_id"):
        AgentRegistry().register_agent("ok", agent(name))


@pytest.mark.parametrize("postfix", ["/x", "..", "a/b", "\x00", "-" * 70, "a b"])
def test_hostile_postfix(postfix: str) -> None:
    reg = registry()
    with pytest.raises(UnsafeNameError) as exc:
        reg.create_compilation_config(CompilationConfig(name="c", template_name="t", postfix=postfix))
    assert "unsafe postfix" in one_line(exc)
