"""Tool permission classes under the module path registries written for the public package import."""

from typing import Literal

from open_agent_compiler.model.core.tool import BashToolPermission, JsonToolPermission, PermissionValue

PermissionType = PermissionValue
ToolScope = Literal["*"]

__all__ = ["BashToolPermission", "JsonToolPermission", "PermissionType", "ToolScope"]
