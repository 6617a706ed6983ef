"""A script given both inline and as a source file: the inline contents are what is compiled and what a tool
test's handler runs (the public package writes the inline contents too)."""

from pathlib import Path

from open_agent_compiler import (
    JsonToolPermission,
    ScriptDefinition,
    ToolDefinition,
    ToolDefinitionHeader,
    ToolDefinitionLogicJson,
    ToolScriptDefinition,
)
from open_agent_compiler.execution.handlers import handler_scripts


def test_inline_contents_win_over_the_source_file(tmp_path: Path) -> None:
    script = ScriptDefinition(target_file_path=Path("scripts/t.py"), source_file_path=Path("src/t.py"),
                              script_contents="print('inline')\n")
    tool = ToolDefinition(header=ToolDefinitionHeader(name="t", description="d"), json_tool=ToolDefinitionLogicJson(
        permission_json=JsonToolPermission(), tool_scripts=[ToolScriptDefinition(scripts=[script])]))
    assert handler_scripts(tool, tmp_path) == [{"source": "print('inline')\n", "label": "scripts/t.py"}]
    only_file = script.model_copy(update={"script_contents": None})
    tool = tool.model_copy(update={"json_tool": tool.json_tool.model_copy(  # type: ignore[union-attr]
        update={"tool_scripts": [ToolScriptDefinition(scripts=[only_file])]})})
    assert handler_scripts(tool, tmp_path) == [{"path": str(tmp_path / "src/t.py")}]
