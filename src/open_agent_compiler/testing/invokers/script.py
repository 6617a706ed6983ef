"""Scripted models: the user decides what "the model" does on each step of each turn.

A `ScriptedModel` answers `next_step(view)` with a `ModelStep`: either tool calls (`call("tool", arg=...)`) or a
final answer (`reply("text")`). It is written once and drives both the in-process simulator (`scripted`
invoker) and the loopback model server real harnesses talk to. Two ways to write one:

    ScriptedModel(turns=[[call("echo-tool", text="hi"), lambda view: reply(view.last_output["text"])],
                         [call("echo-tool", text="again"), reply("done")]])
    ScriptedModel(function=lambda view: call("echo-tool", text=view.prompt) if view.step == 0 else reply("ok"))

A step in a `turns` list may be a callable of the `ModelView` (to answer from tool results).
"""

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict

from open_agent_compiler.model.core.evaluator import ToolCall
from open_agent_compiler.testing.invokers.protocol import InvokerError

MAX_STEPS = 50  # model steps per turn before a script is taken to loop


class ToolUse(BaseModel):
    model_config = ConfigDict(frozen=True)

    tool: str
    args: dict[str, Any] = {}


class ModelStep(BaseModel):
    """Tool calls to make (then the model is asked again), or — with none — the turn's final `text`."""

    model_config = ConfigDict(frozen=True)

    tool_calls: tuple[ToolUse, ...] = ()
    text: str = ""


class Message(BaseModel):
    model_config = ConfigDict(frozen=True)

    role: str  # "user" or "assistant"
    text: str


class ModelView(BaseModel):
    """What a script sees when asked for the next step."""

    model_config = ConfigDict(frozen=True)

    turn: int  # 1-based
    step: int  # 0-based model step within the turn
    prompt: str  # this turn's user prompt
    tools: tuple[str, ...]  # tools the agent may call
    tool_results: tuple[ToolCall, ...] = ()  # this turn's calls so far, with outputs
    conversation: tuple[Message, ...] = ()  # earlier turns: prompts and final answers
    system_prompt: str | None = None  # what the harness sent as system prompt (model server only)

    @property
    def last_output(self) -> Any:
        return self.tool_results[-1].output if self.tool_results else None


StepSource = ModelStep | Callable[[ModelView], ModelStep]


def call(tool: str, /, **args: Any) -> ModelStep:
    """One tool call."""
    return ModelStep(tool_calls=(ToolUse(tool=tool, args=args),))


def calls(*uses: ToolUse) -> ModelStep:
    """Several tool calls in one model step (parallel tool calls)."""
    return ModelStep(tool_calls=uses)


def reply(text: str) -> ModelStep:
    """The turn's final answer."""
    return ModelStep(text=text)


class ScriptedModel:
    """A scripted "model": per-turn step lists, or one function of the view."""

    def __init__(self, turns: Sequence[Sequence[StepSource]] | None = None, *,
                 function: Callable[[ModelView], ModelStep] | None = None) -> None:
        if (turns is None) == (function is None):
            raise ValueError("ScriptedModel needs exactly one of turns or function")
        self.turns = [list(steps) for steps in turns] if turns is not None else None
        self.function = function

    def next_step(self, view: ModelView) -> ModelStep:
        """The next step; a broken script raises `InvokerError` naming the turn and step."""
        where = f"script, turn {view.turn} step {view.step + 1}"
        source: StepSource
        if self.turns is not None:
            if view.turn > len(self.turns):
                raise InvokerError(f"script has {len(self.turns)} turn(s); the test plays turn {view.turn}")
            steps = self.turns[view.turn - 1]
            if view.step >= len(steps):
                raise InvokerError(f"script for turn {view.turn} ran out of steps without a reply()")
            source = steps[view.step]
        else:
            assert self.function is not None
            source = self.function
        if isinstance(source, ModelStep):
            return source
        try:
            step = source(view)
        except InvokerError:
            raise
        except Exception as exc:  # noqa: BLE001 - the user's script: its error fails the test, naming it
            raise InvokerError(f"{where} raised {type(exc).__name__}: {exc}") from exc
        if not isinstance(step, ModelStep):
            raise InvokerError(f"{where} returned {type(step).__name__}, not a ModelStep (use call()/reply())")
        return step


def as_model(value: Any, where: str) -> ScriptedModel:
    """A script entry as a `ScriptedModel`: one already, a function of the view, or a list of turns."""
    if isinstance(value, ScriptedModel):
        return value
    if callable(value):
        return ScriptedModel(function=value)
    if isinstance(value, Sequence) and not isinstance(value, str):
        return ScriptedModel(turns=value)
    raise InvokerError(f"{where} is a {type(value).__name__}, not a ScriptedModel, function or list of turns")


def check_tools(step: ModelStep, tools: Sequence[str], agent: str) -> None:
    """A script may only call tools the agent can call."""
    for use in step.tool_calls:
        if use.tool not in tools:
            granted = ", ".join(tools) or "none"
            raise InvokerError(f"script calls tool {use.tool!r}, which agent {agent!r} cannot call (it can: {granted})")


def script_entry(scripts: Mapping[str, Any], test_name: str, spec: str) -> ScriptedModel:
    if test_name in scripts:
        return as_model(scripts[test_name], f"{spec}[{test_name!r}]")
    raise InvokerError(f"no script for agent test {test_name!r} in {spec} (keys: {', '.join(map(repr, scripts)) or 'none'})")
