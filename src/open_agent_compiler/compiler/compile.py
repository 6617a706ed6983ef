"""The public package's one-call compile entry points at its path: `build`, `build_variant`, and the names its
build scripts import from here."""

from open_agent_compiler.compiler.dialects import get_dialect
from open_agent_compiler.compiler.script import CompileResult, CompileScript, build, build_variant
from open_agent_compiler.model.core.compilation_context import CompilationContext, current_context
from open_agent_compiler.model.core.compilation_context import active as active_context
from open_agent_compiler.model.core.variant_spec import VariantSpec, apply_variant
from open_agent_compiler.model.registry import AgentRegistry

__all__ = ["AgentRegistry", "CompilationContext", "CompileResult", "CompileScript", "VariantSpec",
           "active_context", "apply_variant", "build", "build_variant", "current_context", "get_dialect"]
