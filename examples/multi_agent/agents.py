"""A notes desk: a coordinator that delegates to a researcher and an editor.

- `coordinator` (primary): reads files, uses the `summarize-notes` skill and the `notes-fs` MCP server, and
  delegates to the two subagents.
- `researcher`: may only list the notes (`list-notes`, a bash tool).
- `editor`: may write and edit, and measures text with `word-stats`, a JSON tool whose real handler is the
  `ScriptTool` in `scripts/word_stats.py` (shipped into the target by the compiler).

    oac compile agents:registry --config prod --target build --dialect all
    oac test agents:registry --config prod
"""

from open_agent_compiler import (
    AgentDefinition,
    AgentHeader,
    AgentRegistry,
    AgentToolPermissions,
    BashToolPermission,
    CapabilityTest,
    CompilationConfig,
    EqualsEvaluator,
    JsonPathEvaluator,
    JsonToolPermission,
    McpServer,
    MockProfile,
    MockResponse,
    ModelParameters,
    PermissionAbsentEvaluator,
    PermissionPresentEvaluator,
    ScriptDefinition,
    SkillDefinition,
    TemplateSlot,
    TemplateTree,
    ToolDefinition,
    ToolDefinitionHeader,
    ToolDefinitionLogicBash,
    ToolDefinitionLogicJson,
    ToolScriptDefinition,
    ToolTest,
    WorkflowStep,
)

WORD_STATS_SCRIPT = "scripts/word_stats.py"
# The input goes in as flags (`--text '...' --top 2`, what the compiled prompt teaches and ScriptTool.run reads):
# one command, so one permission pattern covers it (a pipe from `echo` would need `echo` allowed too).
WORD_STATS_COMMAND = f"python3 {WORD_STATS_SCRIPT} *"


def list_notes_tool() -> ToolDefinition:
    return ToolDefinition(
        header=ToolDefinitionHeader(
            name="list-notes",
            description="List the note files.",
            usage_explanation_long="Run it before reading notes, to learn which files exist.",
            rules=["Never list directories other than notes/."],
        ),
        bash_tool=ToolDefinitionLogicBash(
            permission_bash=BashToolPermission(allowed_commands=["ls notes/*"]),
            positive_examples=["ls notes/*.md"],
            negative_examples=["ls ~", "rm notes/monday.md"],
        ),
        mock=MockResponse(kind="fixed", fixed_output={"files": ["notes/monday.md", "notes/tuesday.md"]}),
        tool_tests=[
            ToolTest(name="list-notes-default-mock", input={},
                     evaluators=(JsonPathEvaluator(path="files.0", expected="notes/monday.md"),)),
        ],
    )


def word_stats_tool() -> ToolDefinition:
    return ToolDefinition(
        header=ToolDefinitionHeader(
            name="word-stats",
            description="Count the words of a text and name the most frequent ones.",
            usage_explanation_long="Give the script the text as --text '...' (and --top N); it answers in JSON.",
            rules=["Send the whole text in one call."],
        ),
        json_tool=ToolDefinitionLogicJson(
            permission_json=JsonToolPermission(allowed_commands=[WORD_STATS_COMMAND]),
            input_schema={"type": "object", "required": ["text"],
                          "properties": {"text": {"type": "string"}, "top": {"type": "integer", "minimum": 1}}},
            output_schema={"type": "object", "properties": {"words": {"type": "integer"},
                                                             "unique": {"type": "integer"},
                                                             "top": {"type": "array", "items": {"type": "string"}}}},
            positive_examples=[f"python3 {WORD_STATS_SCRIPT} --text 'to be or not to be' --top 2"],
            negative_examples=[f"""echo '{{"text": "hi"}}' | python3 {WORD_STATS_SCRIPT}"""],
            tool_scripts=[ToolScriptDefinition(scripts=[
                ScriptDefinition(target_file_path=WORD_STATS_SCRIPT, source_file_path=WORD_STATS_SCRIPT),
            ])],
        ),
        handler_script=WORD_STATS_SCRIPT,
        # No default mock: without a profile, tool tests run the real handler.
        tool_tests=[
            ToolTest(name="word-stats-real-handler", input={"text": "to be or not to be", "top": 2},
                     evaluators=(EqualsEvaluator(field="words", expected=6),
                                 EqualsEvaluator(field="top", expected=["be", "to"]))),
            ToolTest(name="word-stats-via-ci-profile", input={"text": "anything"}, mock_profile="ci",
                     evaluators=(JsonPathEvaluator(path="top.0", expected="mocked"),)),
        ],
    )


def summarize_skill() -> SkillDefinition:
    return SkillDefinition(
        name="summarize-notes",
        description="Summarize this week's notes in five bullet points.",
        usage_explanation_long="Use it when asked what happened this week.",
        rules=["Quote decisions verbatim.", "Five bullets at most."],
        workflow_steps=[
            WorkflowStep(header="Find the notes", rule="List them first.", tools_used=[list_notes_tool()]),
            WorkflowStep(header="Measure", rule="Report the word count of the summary.",
                         tools_used=[word_stats_tool()]),
        ],
        positive_examples=["Decided: the compiler writes only what it owns."],
    )


def coordinator() -> AgentDefinition:
    return AgentDefinition(
        header=AgentHeader(agent_id="coordinator", name="coordinator",
                           description="Answers questions about the team's notes, delegating the legwork."),
        system_prompt=("You coordinate a small notes desk. Delegate listing to `researcher` and writing to "
                       "`editor`; answer the user yourself."),
        usage_explanation_long="The entry point: ask it anything about the notes.",
        skills=[summarize_skill()],
        subagents=[AgentHeader(agent_id="researcher", name="researcher"),
                   AgentHeader(agent_id="editor", name="editor")],
        tool_permissions=AgentToolPermissions(read=True, mcp=True),
        mcp_servers=[McpServer(name="notes-fs", description="Read-only access to the notes folder.",
                               command=["npx", "-y", "@modelcontextprotocol/server-filesystem", "notes"])],
        capability_tests=[
            CapabilityTest(name="coordinator-delegates", must_have_subagents=("researcher", "editor"),
                           must_have_skills=("summarize-notes",), must_have_tools=("list-notes", "word-stats")),
            CapabilityTest(name="coordinator-reads-but-never-writes", must_have_permissions=("read",),
                           must_not_have_permissions=("write", "edit")),
            CapabilityTest(name="coordinator-uses-mcp", evaluators=(PermissionPresentEvaluator(permission_key="mcp"),)),
        ],
    )


def researcher() -> AgentDefinition:
    return AgentDefinition(
        header=AgentHeader(agent_id="researcher", name="researcher", description="Finds which notes exist."),
        system_prompt="List the notes with list-notes and report the file names. Change nothing.",
        extra_tools=[list_notes_tool()],
        tool_permissions=AgentToolPermissions(read=True),
        capability_tests=[
            CapabilityTest(name="researcher-lists-only", must_have_bash_patterns=("ls notes/*",),
                           must_not_have_bash_patterns=("rm *", "curl *")),
            CapabilityTest(name="researcher-cannot-write",
                           evaluators=(PermissionAbsentEvaluator(permission_key="write"),
                                       PermissionAbsentEvaluator(permission_key="task"))),
        ],
    )


def editor() -> AgentDefinition:
    return AgentDefinition(
        header=AgentHeader(agent_id="editor", name="editor", description="Writes summaries into notes/."),
        system_prompt="Write the summary you are given into notes/summary.md, then report its word-stats.",
        extra_tools=[word_stats_tool()],
        tool_permissions=AgentToolPermissions(write=True, edit=True),
        capability_tests=[
            CapabilityTest(name="editor-writes", must_have_permissions=("write", "edit"),
                           must_have_bash_patterns=(WORD_STATS_COMMAND,)),
        ],
    )


def registry() -> AgentRegistry:
    reg = AgentRegistry()
    model = ModelParameters(model_name="zai-coding-plan/glm-4.7", temperature=0.2, reasoning_effort="medium")
    reg.register_agent("coordinator", coordinator(), model)
    reg.register_agent("researcher", researcher(), ModelParameters(model_name="zai-coding-plan/glm-4.5-air"))
    reg.register_agent("editor", editor(), model)
    reg.register_template(TemplateTree(name="notes-desk", slots=[
        TemplateSlot(name="primary", default_agent_id="coordinator"),
        TemplateSlot(name="researcher", default_agent_id="researcher"),
        TemplateSlot(name="editor", default_agent_id="editor"),
    ]))
    reg.create_compilation_config(CompilationConfig(name="prod", template_name="notes-desk"))
    reg.create_compilation_config(CompilationConfig(name="dev", template_name="notes-desk", postfix="-dev"))
    reg.register_mock_profile(MockProfile(name="ci", responses={
        "word-stats": MockResponse(kind="fixed", fixed_output={"words": 1, "unique": 1, "top": ["mocked"]}),
    }))
    return reg
