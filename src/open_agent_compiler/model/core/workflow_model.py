"""An agent's mandatory workflow: ordered steps, each with optional gate, questions to answer, tools, subagents,
todo marks and routes to other steps. Pure data; the compiler renders it into the agent's instructions."""

from typing import Literal

from pydantic import Field, model_validator

from open_agent_compiler.model.core.base import Frozen

GateLogic = Literal["all", "any"]


class GateCheck(Frozen):
    """`variable` must equal `value` (a variable is the answer to an earlier step's Criterion)."""

    variable: str
    value: str


class Gate(Frozen):
    """The step runs only when its checks hold: every one (`all`) or at least one (`any`)."""

    logic: GateLogic = "all"
    checks: tuple[GateCheck, ...] = ()

    @model_validator(mode="after")
    def _has_checks(self) -> "Gate":
        if not self.checks:
            raise ValueError("a Gate needs at least one GateCheck")
        return self


class Criterion(Frozen):
    """A question the agent answers at this step; its answer is the variable `name`."""

    name: str
    question: str
    possible_values: tuple[str, ...] = ()


class Route(Frozen):
    """When criterion `criteria_name` is answered `value`, continue at step `goto_step` (a step id)."""

    criteria_name: str
    value: str
    goto_step: int


class ToolUse(Frozen):
    """A tool (by name, defined elsewhere on the agent) this step uses, with an optional note on how."""

    tool_name: str
    note: str | None = None


class WorkflowStepDefinition(Frozen):
    """One step of `AgentDefinition.workflow`. Only `id` and `name` are required."""

    id: int
    name: str
    instructions: str = ""
    todo_name: str | None = None  # todo item of this step; None: `name`. Steps may share one item.
    todo_description: str = ""
    gate: Gate | None = None
    evaluates: tuple[Criterion, ...] = ()
    tool_uses: tuple[ToolUse, ...] = ()
    subagents: tuple[str, ...] = ()  # agent names to hand off to at this step
    marks_done: tuple[str, ...] = Field(default=())  # todo items this step completes
    routes: tuple[Route, ...] = ()

    def effective_todo_name(self) -> str:
        return self.todo_name or self.name
