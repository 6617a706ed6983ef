"""What a tool script imports at run time, at the public package's path: `ScriptTool`, the environment variables
it reads (`MOCK_ENV`, `RESOURCES_ENV`) and `ResourceHandle`."""

from open_agent_compiler.model.resource_handle import MOCK_ENV, RESOURCES_ENV, ResourceHandle
from open_agent_compiler.model.script_tool import ScriptTool

__all__ = ["MOCK_ENV", "RESOURCES_ENV", "ResourceHandle", "ScriptTool"]
