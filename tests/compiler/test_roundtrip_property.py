"""Property: any name, description and prompt survive compile → write → `load_agent_artifact` in every dialect,
and the facts read back from the body cannot be forged by text that imitates our headings."""

import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from oac_builders import DIALECT_NAMES, agent, bash_tool

from open_agent_compiler.compiler.dialects import DIALECTS
from open_agent_compiler.compiler.prompt import lf
from open_agent_compiler.compiler.writer import write_output
from open_agent_compiler.model.core.template import CompilationConfig, TemplateSlot, TemplateTree
from open_agent_compiler.model.registry import AgentRegistry, ResolvedConfig
from open_agent_compiler.testing.artifacts import load_agent_artifact, load_capabilities

NAMES = st.from_regex(r"[A-Za-z0-9][A-Za-z0-9_-]{0,20}", fullmatch=True)
POSTFIXES = st.from_regex(r"[A-Za-z0-9_-]{0,6}", fullmatch=True)
TRICKY = st.sampled_from(["---", "\n---\n", ": ", "'", '"', "#", "\\", "...", "\r", "\t", "\x00", "\x1b", "\x7f",
                          "\x85", "\u2028", "\ufeff", "é", "漢字", "🙂", "yes", "null", "0o17", "- a", "[x]", "{y}",
                          "## Tools", "## Permissions", "### Tool: forged", "- `curl *` (allow)", "Allowed commands:", "- read: allow"])
TEXT = st.lists(st.one_of(TRICKY, st.text(max_size=12)), min_size=1, max_size=8).map("".join)


def one_agent(slot: str, postfix: str, description: str, prompt: str, tool_text: str) -> ResolvedConfig:
    tool = bash_tool("echo", "echo *", rules=(tool_text,))
    tool = tool.model_copy(update={"header": tool.header.model_copy(update={"description": tool_text})})
    reg = AgentRegistry()
    reg.register_agent("a", agent("a", description=description, system_prompt=prompt, extra_tools=[tool]))
    reg.register_template(TemplateTree(name="t", slots=[TemplateSlot(name=slot, default_agent_id="a")]))
    reg.create_compilation_config(CompilationConfig(name="c", template_name="t", postfix=postfix))
    return reg.resolve_config("c")


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(slot=NAMES, postfix=POSTFIXES, description=TEXT, prompt=TEXT, tool_text=TEXT)
def test_round_trip_in_every_dialect(slot: str, postfix: str, description: str, prompt: str, tool_text: str) -> None:
    resolved = one_agent(slot, postfix, description, prompt, tool_text)
    name = slot + postfix
    with tempfile.TemporaryDirectory() as tmp:
        build = Path(tmp)
        for dialect in DIALECT_NAMES:
            write_output(DIALECTS[dialect].compile(resolved), build, dialect=dialect)
            art = load_agent_artifact(build, name, dialect=dialect)
            assert art.config["description"] == (description or "a")  # empty falls back to the agent's name
            if dialect != "opencode":
                assert art.config["name"] == name
            if prompt.strip():  # CR and CRLF become LF
                assert lf(prompt).strip("\n") in art.body
            caps = load_capabilities(build, name, dialect)
            # imitation of our headings in user text grants nothing
            assert caps.tools == ("echo",)
            assert {p: a for p, a in caps.bash.items() if p != "*"} == {"echo *": "allow"}
            assert caps.permissions["read"] == "deny" and caps.subagents == () and caps.skills == ()
