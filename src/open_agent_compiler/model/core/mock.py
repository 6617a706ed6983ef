"""Mock data: what a tool returns instead of running its real handler. Behaviour lives in `testing.mocks`."""

from collections.abc import ItemsView, Iterator, KeysView, ValuesView
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from open_agent_compiler.model.core.base import Frozen, Text
from open_agent_compiler.model.hashing import AnyValue

MockKind = Literal["fixed", "sequence", "stateful_callable", "callable", "echo"]


class MockResponse(Frozen):
    """How a mocked tool answers.

    fixed: always `fixed_output`; sequence: call N gets `sequence[N]`, the last item past the end;
    callable: `callable_spec` ("module:function") is called with the input; stateful_callable: called with the
    input and a `MockState` that persists for one test (one session); echo: returns the input unchanged.
    """

    kind: MockKind = "fixed"
    fixed_output: AnyValue = None
    sequence: tuple[AnyValue, ...] = ()
    callable_spec: str | None = None
    description: Text = ""

    @model_validator(mode="after")
    def _check_kind_fields(self) -> "MockResponse":
        if self.kind == "fixed" and self.fixed_output is None:
            raise ValueError("a 'fixed' mock needs a fixed_output (a tool that returns nothing can echo or use a "
                             "callable)")
        if self.kind == "sequence" and not self.sequence:
            raise ValueError("a 'sequence' mock needs a non-empty sequence")
        if self.kind in ("callable", "stateful_callable"):
            spec = self.callable_spec or ""
            module, _, func = spec.partition(":")
            if not module or not func:
                raise ValueError(f"a '{self.kind}' mock needs callable_spec 'module:function', got {spec!r}")
        return self


class MockInput(BaseModel):
    """The input a `callable`/`stateful_callable` mock receives: a pydantic model holding the call's arguments as
    fields (`args.query`, as in the public package), which also reads as the mapping it came from
    (`args["query"]`, `args.get("query")`, `"query" in args`, `dict(args)`)."""

    model_config = ConfigDict(extra="allow")

    def _fields(self) -> dict[str, Any]:
        return dict(self.__pydantic_extra__ or {})

    def __getitem__(self, key: str) -> Any:
        return self._fields()[key]

    def get(self, key: str, default: Any = None) -> Any:
        return self._fields().get(key, default)

    def __contains__(self, key: object) -> bool:
        return key in self._fields()

    def __len__(self) -> int:
        return len(self._fields())

    def keys(self) -> KeysView[str]:
        return self._fields().keys()

    def values(self) -> ValuesView[Any]:
        return self._fields().values()

    def items(self) -> ItemsView[str, Any]:
        return self._fields().items()

    def __iter__(self) -> Iterator[str]:  # type: ignore[override]  # a mapping iterates over its keys
        return iter(self._fields())


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
