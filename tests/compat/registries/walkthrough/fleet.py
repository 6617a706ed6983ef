"""Step 7 — model presets and variants. A `ModelPreset` names a provider, a model and its sampling defaults;
`register_agent_with_preset` binds an agent to it. A build script compiles the same config once per
`VariantSpec` (each with its preset and postfix) with `CompileScript`:

    python build.py build          # writes build/.opencode/agents/primary-fast.md and primary-deep.md, ...
    oac test fleet:registry --config default
"""

from open_agent_compiler.model.core.agent_model import (
    AgentDefinition, CompilationConfig, TemplateSlot, TemplateTree, ToolPermissions,
)
from open_agent_compiler.model.core.agent_registry import AgentRegistry
from open_agent_compiler.model.core.model_preset import ModelPreset, SamplingDefaults
from open_agent_compiler.model.core.test_model import CapabilityTest
from open_agent_compiler.model.core.variant_spec import VariantSpec

from common import bash_tool, header

SONNET = ModelPreset(name="sonnet", provider="anthropic", model_id="claude-sonnet-4-5",
                     sampling=SamplingDefaults(temperature=0.3), reasoning=True)
HAIKU = ModelPreset(name="haiku", provider="anthropic", model_id="claude-haiku-4-5",
                    sampling=SamplingDefaults(temperature=0.0))
VARIANTS = [VariantSpec(name="fast", postfix="-fast", preset=HAIKU),
            VariantSpec(name="deep", postfix="-deep", preset=SONNET)]


def registry() -> AgentRegistry:
    reg = AgentRegistry()
    summariser = AgentDefinition(
        header=header("summariser", "Summarises support threads."),
        usage_explanation_long="Reads a thread, writes five bullet points.", usage_explanation_short="summariser",
        system_prompt="Summarise the thread in five bullet points.",
        extra_tools=[bash_tool("threads", "Print a support thread.", ["cat threads/*.txt"])],
        tool_permissions=ToolPermissions(read=True),
        capability_tests=[CapabilityTest(name="summariser-reads-threads", must_have_tools=("threads",),
                                         must_have_bash_patterns=("cat threads/*.txt",),
                                         must_not_have_bash_patterns=("curl *",))],
    )
    agent_id = reg.register_agent_with_preset("summariser", summariser, SONNET)
    reg.register_template(TemplateTree(name="support", description=None,
                                       slots=[TemplateSlot(name="primary", default_agent_id=agent_id)]))
    reg.create_compilation_config(CompilationConfig(name="default", template_name="support"))
    return reg
