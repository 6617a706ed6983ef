"""Tool permission classes under the module path registries written for the public package import."""

from typing import Literal

from open_agent_compiler.model.core.tool import BashToolPermission, JsonToolPermission, PermissionValue

PermissionType = PermissionValue
ToolScope = Literal["*"]
# OpenCode's tool and permission names, as the public package lists them (type hints in registries use it).
DefaultTools = Literal[
    "custom_tool", "read", "edit", "patch", "write", "mcp", "bash", "glob", "lsp", "skill", "todowrite", "webfetch",
    "websearch", "external_directory", "doom_loop", "question",
]

__all__ = ["BashToolPermission", "DefaultTools", "JsonToolPermission", "PermissionType", "ToolScope"]
