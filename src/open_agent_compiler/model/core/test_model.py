"""The three test kinds, embedded on the definitions they validate.

- `CapabilityTest` (on `AgentDefinition.capability_tests`): introspects the compiled artifact; no LLM, no I/O.
- `ToolTest` (on `ToolDefinition.tool_tests`, or agent-scoped on `AgentDefinition.tool_tests` with `tool` set):
  drives a tool's mock or real handler with `input` and scores the output.
- `AgentTest` (on `AgentDefinition.agent_tests`): a single- or multi-turn scenario run through an invoker.
"""

import os
import re
import sys

import pydantic
from typing import Annotated, Any, Literal, get_args

from pydantic import Field, SerializeAsAny, field_validator, model_validator

from open_agent_compiler.model.core.base import Frozen
from open_agent_compiler.model.core.evaluator import Evaluator, FactSpec  # noqa: F401  (FactSpec: public path)
from open_agent_compiler.model.hashing import FAITHFUL, AnyValue

Evaluators = tuple[SerializeAsAny[Evaluator], ...]


# frames in these folders are not where a user built a test: this package, and pydantic (its validators)
_OURS = (os.path.dirname(os.path.dirname(os.path.dirname(__file__))) + os.sep,
         os.path.dirname(pydantic.__file__) + os.sep)


def defining_line() -> tuple[str, int] | None:
    """(absolute file, line) of the nearest caller outside this package and pydantic: where a test is built."""
    frame = sys._getframe(1)
    while frame is not None:
        filename = frame.f_code.co_filename
        if not filename.startswith(_OURS) and not filename.startswith("<"):
            return os.path.abspath(filename), frame.f_lineno
        frame = frame.f_back  # type: ignore[assignment]
    return None


_DEFINED_AT = "_oac_defined_at"


class _TestBase(Frozen):
    def model_post_init(self, context: Any, /) -> None:
        super().model_post_init(context)
        # where the test was constructed, for records, annotations, JUnit and pytest: kept in `__dict__` under a
        # name no field has, so it is no part of the test's value — not its dump, key, hash or equality (pydantic
        # compares fields only when `__dict__`s differ; a private attribute would make equal tests unequal)
        self.__dict__[_DEFINED_AT] = defining_line()

    @property
    def defined_at(self) -> tuple[str, int] | None:
        return self.__dict__.get(_DEFINED_AT)

    name: str
    description: str = ""
    evaluators: Evaluators = ()
    access_profile: str | None = None
    inputs: tuple[str, ...] = ()  # globs (from the project root) of files the test depends on that no tracker sees
    tags: tuple[str, ...] = ()  # selected with `oac test -m EXPR` / pytest's `-m` (ours; the public package has none)

    @field_validator("tags")
    @classmethod
    def _tags_are_names(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        for tag in value:
            if not re.fullmatch(r"[A-Za-z_][\w.-]*", tag) or tag in ("and", "or", "not"):
                raise ValueError(f"tag {tag!r} must be a name (letters, digits, _ . -; not and/or/not) so -m can "
                                 f"select it")
        return value

    @field_validator("name")
    @classmethod
    def _name_is_one_line(cls, value: str) -> str:
        if not value or not value.isprintable():
            raise ValueError(f"test name {value!r} must be non-empty and on one line")
        return value


class CapabilityTest(_TestBase):
    """Checks what the compiled agent may do. Every `must_*` entry and evaluator must hold."""

    must_have_bash_patterns: tuple[str, ...] = ()
    must_not_have_bash_patterns: tuple[str, ...] = ()
    must_have_tools: tuple[str, ...] = ()
    must_not_have_tools: tuple[str, ...] = ()
    must_have_skills: tuple[str, ...] = ()
    must_not_have_skills: tuple[str, ...] = ()
    must_have_subagents: tuple[str, ...] = ()
    must_have_permissions: tuple[str, ...] = ()
    must_not_have_permissions: tuple[str, ...] = ()


class ToolTest(_TestBase):
    """Feeds `input` to a tool (its mock, else its real handler) and scores the output.

    `tool` names the tool when the test is not defined on the tool itself (agent- or skill-scoped tests).
    """

    input: dict[str, AnyValue] = Field(default_factory=dict)
    tool: str | None = None
    mock_profile: str | None = None


class Turn(Frozen):
    prompt: str
    expected_tool_calls: tuple[str, ...] = ()
    evaluators: Evaluators = ()


class AgentTest(_TestBase):
    """An end-to-end scenario: the turns share one session; each turn carries its own assertions.

    A single-turn test may give `prompt` (+ `expected_tool_calls`) instead of `turns`; `evaluators` apply to
    the whole conversation.
    """

    prompt: str = ""
    expected_tool_calls: tuple[str, ...] = ()
    turns: tuple[Turn, ...] = ()
    mock_profile: str | None = None
    timeout_s: Annotated[float, FAITHFUL] = 60.0  # (FAITHFUL: NaN and inf kept apart in the digest)

    @model_validator(mode="after")
    def _prompt_or_turns(self) -> "AgentTest":
        if bool(self.prompt) == bool(self.turns):
            raise ValueError(f"agent test {self.name!r} needs exactly one of prompt or turns")
        return self

    @property
    def is_multi_turn(self) -> bool:
        return bool(self.turns)

    def all_turns(self) -> tuple[Turn, ...]:
        """The turns as the public package gives them: a single-turn test's evaluators ride on its one turn."""
        if self.turns:
            return self.turns
        return (Turn(prompt=self.prompt, expected_tool_calls=self.expected_tool_calls, evaluators=self.evaluators),)

    def conversation(self) -> tuple[Turn, ...]:
        """The turns to play, a single-turn `prompt` included."""
        if self.turns:
            return self.turns
        return (Turn(prompt=self.prompt, expected_tool_calls=self.expected_tool_calls),)


# The evaluator kinds live in `testing` (they carry behaviour); registries written for the public package import
# them from here, so they resolve on first access instead of at import (model must not import testing eagerly).
_EVALUATOR_NAMES = frozenset({
    "EqualsEvaluator", "SubstringEvaluator", "RegexEvaluator", "JsonPathEvaluator", "ToolCalledEvaluator",
    "ToolNotCalledEvaluator", "PathOrderEvaluator", "PermissionPresentEvaluator", "PermissionAbsentEvaluator",
    "LLMJudgeEvaluator", "FactRecallEvaluator",
})


# The kinds in the public package's order; `AnyEvaluator` is the union of their classes (resolved on first use).
EvaluatorKind = Literal[
    "equals", "substring", "regex", "json_path", "tool_called", "tool_not_called", "path_order",
    "permission_present", "permission_absent", "llm_judge", "fact_recall",
]


def __getattr__(name: str) -> Any:
    if name in _EVALUATOR_NAMES:
        import open_agent_compiler  # each evaluator from its own module (see the package's table)

        return getattr(open_agent_compiler, name)
    if name == "AnyEvaluator":
        from functools import reduce
        from operator import or_

        from open_agent_compiler.testing.evaluation import EVALUATORS

        return reduce(or_, (EVALUATORS[kind] for kind in get_args(EvaluatorKind)))
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
