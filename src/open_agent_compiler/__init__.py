"""open_agent_compiler: define agents, tools, skills and tests once; compile them for OpenCode, Claude Code,
Pi and Codex; test them mocks-first. This module only re-exports the public names."""

from open_agent_compiler.errors import FactoryError, OacError, RegistryError, UnsafeNameError
from open_agent_compiler.model.core.access_profile import (
    AccessProfile,
    AccessProfileRegistry,
    ResourceBinding,
    ResourceKind,
)
from open_agent_compiler.model.core.agent import (
    AgentDefinition,
    AgentHeader,
    AgentMode,
    AgentToolPermissions,
    AgentVariant,
    AgentWorkflowStep,
    MCPServerDefinition,
    McpServer,
    ModelParameters,
    TodoMode,
    ToolFormat,
)
from open_agent_compiler.model.core.capabilities import Capabilities
from open_agent_compiler.model.core.evaluator import (
    EvaluationContext,
    Evaluator,
    EvaluatorResult,
    FactSpec,
    JudgeClient,
    JudgeVerdict,
    ToolCall,
)
from open_agent_compiler.model.core.mock import MockKind, MockProfile, MockResponse, MockState
from open_agent_compiler.model.core.compilation_context import CompilationContext
from open_agent_compiler.model.core.model_preset import ModelLimits, ModelPreset, ReasoningField, SamplingDefaults
from open_agent_compiler.model.core.skill import SkillDefinition, SkillExample, WorkflowStep
from open_agent_compiler.model.core.template import CompilationConfig, TemplateSlot, TemplateTree
from open_agent_compiler.model.core.test_model import AgentTest, AnyEvaluator, CapabilityTest, EvaluatorKind, ToolTest, Turn
from open_agent_compiler.model.core.permissions_model import DefaultTools, PermissionType, ToolScope
from open_agent_compiler.model.core.split_profile import SplitProfile
from open_agent_compiler.model.core.variant_spec import VariantSpec, apply_variant
from open_agent_compiler.model.core.workflow_model import (
    Criterion,
    Gate,
    GateCheck,
    GateLogic,
    Route,
    ToolUse,
    WorkflowStepDefinition,
)
from open_agent_compiler.model.core.tool import (
    BashToolPermission,
    JsonToolPermission,
    ScriptDefinition,
    ToolDefinition,
    ToolDefinitionHeader,
    ToolDefinitionLogicBash,
    ToolDefinitionLogicJson,
    ToolScriptDefinition,
)
from open_agent_compiler.model.core.tools_model import SupportedScriptTypes
from open_agent_compiler.model.factory import load_registry
from open_agent_compiler.model.registry import AgentRegistry, ResolvedAgent, ResolvedConfig
from open_agent_compiler.model.script_tool import ScriptTool
from open_agent_compiler.testing.evaluation import (
    EqualsEvaluator,
    FactRecallEvaluator,
    JsonPathEvaluator,
    LLMJudgeEvaluator,
    PathOrderEvaluator,
    PermissionAbsentEvaluator,
    PermissionPresentEvaluator,
    RegexEvaluator,
    SubstringEvaluator,
    ToolCalledEvaluator,
    ToolNotCalledEvaluator,
)

__version__ = "0.1.0"

__all__ = [name for name in dir() if not name.startswith("_") and name[0].isupper()] + ["load_registry", "apply_variant", "CompileScript", "build", "build_variant"]


def __getattr__(name: str) -> object:
    # The programmatic compile pulls in the compiler and writer; import it only when asked for, so that processes
    # which only need definitions (tool handler children, the CLI's test path) start as fast as before.
    if name in ("CompileScript", "build", "build_variant"):
        from open_agent_compiler.compiler import script

        return getattr(script, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
