"""open_agent_compiler: define agents, tools, skills and tests once; compile them for OpenCode, Claude Code,
Pi and Codex; test them mocks-first. This module only re-exports the public names.

Each public name is imported on first use (PEP 562): `from open_agent_compiler import AgentDefinition` imports
the agent model, not every model, the evaluators and the compiler (a warm `oac test` imports only what it uses,
issue 18). `dir()` and `__all__` list every public name."""

import importlib
from typing import Any

__version__ = "0.1.0"

# module (under this package) → the public names it defines
_MODULES: dict[str, tuple[str, ...]] = {
    "errors": ("FactoryError", "OacError", "RegistryError", "UnsafeNameError"),
    "model.core.access_profile": ("AccessProfile", "AccessProfileRegistry", "ResourceBinding", "ResourceKind"),
    "model.core.agent": ("AgentDefinition", "AgentHeader", "AgentMode", "AgentToolPermissions", "AgentVariant",
                         "AgentWorkflowStep", "MCPServerDefinition", "McpServer", "ModelParameters", "TodoMode",
                         "ToolFormat"),
    "model.core.capabilities": ("Capabilities",),
    "model.core.evaluator": ("EvaluationContext", "Evaluator", "EvaluatorResult", "FactSpec", "JudgeClient",
                             "JudgeVerdict", "ToolCall"),
    "model.core.mock": ("MockKind", "MockProfile", "MockResponse", "MockState"),
    "model.core.compilation_context": ("CompilationContext",),
    "model.core.model_preset": ("ModelLimits", "ModelPreset", "ReasoningField", "SamplingDefaults"),
    "model.core.skill": ("SkillDefinition", "SkillExample", "WorkflowStep"),
    "model.core.template": ("CompilationConfig", "TemplateSlot", "TemplateTree"),
    "model.core.test_model": ("AgentTest", "AnyEvaluator", "CapabilityTest", "EvaluatorKind", "ToolTest", "Turn"),
    "model.core.permissions_model": ("DefaultTools", "PermissionType", "ToolScope"),
    "model.core.split_profile": ("SplitProfile",),
    "model.core.variant_spec": ("VariantSpec", "apply_variant"),
    "model.core.workflow_model": ("Criterion", "Gate", "GateCheck", "GateLogic", "Route", "ToolUse",
                                  "WorkflowStepDefinition"),
    "model.core.tool": ("BashToolPermission", "JsonToolPermission", "ScriptDefinition", "ToolDefinition",
                        "ToolDefinitionHeader", "ToolDefinitionLogicBash", "ToolDefinitionLogicJson",
                        "ToolScriptDefinition"),
    "model.core.tools_model": ("SupportedScriptTypes",),
    "model.factory": ("load_registry",),
    "model.registry": ("AgentRegistry", "ResolvedAgent", "ResolvedConfig"),
    "model.script_tool": ("ScriptTool",),
    # each evaluator from its own module (the table in testing.evaluation imports all eleven and the run context)
    "testing.evaluators.equals": ("EqualsEvaluator",),
    "testing.evaluators.fact_recall": ("FactRecallEvaluator",),
    "testing.evaluators.json_path": ("JsonPathEvaluator",),
    "testing.evaluators.llm_judge": ("LLMJudgeEvaluator",),
    "testing.evaluators.path_order": ("PathOrderEvaluator",),
    "testing.evaluators.permission_absent": ("PermissionAbsentEvaluator",),
    "testing.evaluators.permission_present": ("PermissionPresentEvaluator",),
    "testing.evaluators.regex": ("RegexEvaluator",),
    "testing.evaluators.substring": ("SubstringEvaluator",),
    "testing.evaluators.tool_called": ("ToolCalledEvaluator",),
    "testing.evaluators.tool_not_called": ("ToolNotCalledEvaluator",),
    # the programmatic compile (the compiler and its writer)
    "compiler.script": ("CompileScript", "build", "build_variant"),
    "improvement.criteria": ("OptimisationCriterion",),  # the improvement loop's criteria (values only)
}
_WHERE: dict[str, str] = {name: module for module, names in _MODULES.items() for name in names}

__all__ = sorted(_WHERE)


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value  # later lookups are plain attribute reads
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_WHERE})
