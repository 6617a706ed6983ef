"""The compile pass a registry is being resolved for, readable by agent factories while it lasts.

`active(ctx)` makes `ctx` the current context for a `with` block (nested blocks restore the outer one);
`current_context()` returns it, or an empty context outside any pass. `build_variant` and `CompileScript` set it
around resolving and compiling, so a definition that branches on a variant's `feature_flags` or on the mock or
access profile a pass is for sees them.
"""

import contextlib
import contextvars
from collections.abc import Iterator
from typing import Any

from pydantic import Field

from open_agent_compiler.model.core.base import Frozen
from open_agent_compiler.model.hashing import AnyValue


class CompilationContext(Frozen):
    variant_name: str | None = None
    variant_postfix: str = ""
    access_profile_name: str | None = None
    mock_profile_name: str | None = None
    client_id: str | None = None
    feature_flags: dict[str, AnyValue] = Field(default_factory=dict)

    def flag(self, name: str, default: Any = False) -> Any:
        """A feature flag of this pass, `default` when the pass does not set it."""
        return self.feature_flags.get(name, default)


_NONE = CompilationContext()
_current: contextvars.ContextVar[CompilationContext] = contextvars.ContextVar("oac_compilation_context", default=_NONE)


def current_context() -> CompilationContext:
    return _current.get()


@contextlib.contextmanager
def active(context: CompilationContext) -> Iterator[CompilationContext]:
    token = _current.set(context)
    try:
        yield context
    finally:
        _current.reset(token)
