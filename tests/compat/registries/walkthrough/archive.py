"""Step 2 — embedded tests: capability tests read the compiled permissions back, tool tests run a tool
against its mock and check the output with evaluators.

    oac test archive:registry --config default
"""

from open_agent_compiler.model.core.agent_model import (
    AgentDefinition, CompilationConfig, ModelParameters, TemplateSlot, TemplateTree, ToolPermissions,
)
from open_agent_compiler.model.core.agent_registry import AgentRegistry
from open_agent_compiler.model.core.mock_model import MockResponse
from open_agent_compiler.model.core.test_model import (
    CapabilityTest, EqualsEvaluator, JsonPathEvaluator, PermissionAbsentEvaluator, PermissionPresentEvaluator,
    RegexEvaluator, SubstringEvaluator, ToolTest,
)

from open_agent_compiler.model.core.tools_model import ToolDefinition

from common import bash_tool, header


def catalogue() -> ToolDefinition:
    return bash_tool(
        "catalogue", "Look up a box in the archive catalogue.", ["grep -i * catalogue.csv", "wc -l catalogue.csv"],
        mock=MockResponse(kind="fixed", fixed_output={"box": "B-17", "shelf": {"row": 4}, "note": "Letters 1921"}),
        tool_tests=[
            ToolTest(name="catalogue-finds-a-box", input={"query": "letters"},
                     evaluators=(EqualsEvaluator(field="box", expected="B-17"),
                                 JsonPathEvaluator(path="shelf.row", expected=4))),
            ToolTest(name="catalogue-note-mentions-year", input={"query": "1921"},
                     evaluators=(SubstringEvaluator(needle="1921"), RegexEvaluator(pattern=r"Letters \d{4}"))),
        ],
    )


def shredder() -> ToolDefinition:
    return bash_tool("shredder", "Never destroy originals.", ["rm *", "shred *"], value="deny")


def registry() -> AgentRegistry:
    reg = AgentRegistry()
    archivist = AgentDefinition(
        header=header("archivist", "Finds boxes in the archive."),
        usage_explanation_long="Answers where a document is kept.", usage_explanation_short="archivist",
        system_prompt="Find the box, say its shelf.",
        extra_tools=[catalogue(), shredder()],
        tool_permissions=ToolPermissions(read=True),
        capability_tests=[
            CapabilityTest(name="archivist-may-search", must_have_tools=("catalogue",),
                           must_have_bash_patterns=("grep -i * catalogue.csv",)),
            CapabilityTest(name="archivist-never-destroys", must_not_have_bash_patterns=("rm *", "shred *")),
            CapabilityTest(name="archivist-reads-but-never-writes",
                           evaluators=(PermissionPresentEvaluator(permission_key="read"),
                                       PermissionAbsentEvaluator(permission_key="write"),
                                       PermissionAbsentEvaluator(permission_key="edit"))),
        ],
    )
    agent_id = reg.register_agent("archivist", archivist, ModelParameters(model_name="anthropic/claude-sonnet-4-5"))
    reg.register_template(TemplateTree(name="archive", description=None,
                                       slots=[TemplateSlot(name="primary", default_agent_id=agent_id)]))
    reg.create_compilation_config(CompilationConfig(name="default", template_name="archive"))
    return reg
