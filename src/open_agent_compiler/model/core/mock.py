"""Mock data: what a tool returns instead of running its real handler. Behaviour lives in `testing.mocks`."""

from typing import Any, Literal

from pydantic import BaseModel, Field, model_validator

from open_agent_compiler.model.core.base import Frozen, Text

MockKind = Literal["fixed", "sequence", "stateful_callable", "callable", "echo"]


class MockResponse(Frozen):
    """How a mocked tool answers.

    fixed: always `fixed_output`; sequence: call N gets `sequence[N]`, the last item past the end;
    callable: `callable_spec` ("module:function") is called with the input; stateful_callable: called with the
    input and a `MockState` that persists for one test (one session); echo: returns the input unchanged.
    """

    kind: MockKind = "fixed"
    fixed_output: Any = None
    sequence: tuple[Any, ...] = ()
    callable_spec: str | None = None
    description: Text = ""

    @model_validator(mode="after")
    def _check_kind_fields(self) -> "MockResponse":
        if self.kind == "sequence" and not self.sequence:
            raise ValueError("a 'sequence' mock needs a non-empty sequence")
        if self.kind in ("callable", "stateful_callable"):
            spec = self.callable_spec or ""
            module, _, func = spec.partition(":")
            if not module or not func:
                raise ValueError(f"a '{self.kind}' mock needs callable_spec 'module:function', got {spec!r}")
        return self


class MockState(BaseModel):  # mutable on purpose: a stateful callable updates it
    """Per-test state handed to `stateful_callable` mocks: which call this is, and a scratchpad that persists."""

    tool_name: str
    call_index: int = 0
    scratchpad: dict[str, Any] = Field(default_factory=dict)


class MockProfile(Frozen):
    """A named set of per-tool mock overrides, e.g. 'ci'. Selected by a test's `mock_profile`."""

    name: str
    description: Text = ""
    responses: dict[str, MockResponse] = Field(default_factory=dict)

    def resolve(self, tool_name: str) -> MockResponse | None:
        return self.responses.get(tool_name)
