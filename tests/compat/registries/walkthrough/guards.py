"""Step 7 — guard tests: `must_not_have_tools` must catch a built-in tool the agent is granted, and
`must_have_tools` may name built-in tools (read, write, edit, task) that permissions grant.

    oac test guards:registry --config default
"""

from open_agent_compiler.model.core.agent_model import (
    AgentDefinition, CompilationConfig, ModelParameters, TemplateSlot, TemplateTree, ToolPermissions,
)
from open_agent_compiler.model.core.agent_registry import AgentRegistry
from open_agent_compiler.model.core.test_model import CapabilityTest

from common import header

MODEL = ModelParameters(model_name="anthropic/claude-sonnet-4-5")


def registry() -> AgentRegistry:
    reg = AgentRegistry()
    helper = AgentDefinition(
        header=header("helper", "Reads files for the editor."), usage_explanation_long="Reads.",
        usage_explanation_short="helper", system_prompt="Read what you are asked to.",
        tool_permissions=ToolPermissions(read=True),
        capability_tests=[
            CapabilityTest(name="helper-may-read", must_have_tools=("read",)),
            CapabilityTest(name="helper-never-edits", must_not_have_tools=("edit", "write", "task")),
        ],
    )
    editor = AgentDefinition(
        header=header("editor", "Edits files."), usage_explanation_long="Edits.", usage_explanation_short="editor",
        system_prompt="Edit the files you are given.",
        tool_permissions=ToolPermissions(read=True, write=True, edit=True),
        subagents=[header("helper", "Reads files for the editor.")],
        capability_tests=[
            CapabilityTest(name="editor-has-the-built-ins", must_have_tools=("read", "write", "edit", "task")),
            CapabilityTest(name="editor-never-edits", must_not_have_tools=("edit",)),  # a guard that must FAIL
            CapabilityTest(name="editor-never-writes", must_not_have_tools=("write",)),  # FAIL too
        ],
    )
    helper_id = reg.register_agent("helper", helper, MODEL)
    editor_id = reg.register_agent("editor", editor, MODEL)
    reg.register_template(TemplateTree(name="guards", description=None, slots=[
        TemplateSlot(name="primary", default_agent_id=editor_id),
        TemplateSlot(name="helper", default_agent_id=helper_id),
    ]))
    reg.create_compilation_config(CompilationConfig(name="default", template_name="guards"))
    return reg
