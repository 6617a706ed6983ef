"""The `scripted` invoker: an in-process simulator. A `ScriptedModel` plays the model; each tool call it makes
goes through the test's `ToolDispatcher` (the same mock resolution as tool tests) — unless the harness of the
run's dialect would refuse its command (`refusals`): then the call is in the trajectory with that error, and
the script does not see it among its tool results, as under the real harness."""

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from open_agent_compiler.model.core.evaluator import ToolCall
from open_agent_compiler.model.core.test_model import AgentTest
from open_agent_compiler.testing.invokers.protocol import (CompiledAgent, Deadline, InvokerError, InvokerInfo,
                                                           ToolDispatcher, TurnResult)
from open_agent_compiler.testing.invokers.refusals import HarnessRules
from open_agent_compiler.testing.invokers.script import (MAX_STEPS, Message, ModelView, ScriptedModel,
                                                         check_tools, script_entry)


class ScriptedSession:
    def __init__(self, model: ScriptedModel, agent: CompiledAgent, dispatcher: ToolDispatcher,
                 deadline: Deadline) -> None:
        self.model = model
        self.agent = agent
        self.dispatcher = dispatcher
        self.deadline = deadline
        self.conversation: list[Message] = []
        self.rules = HarnessRules(agent)

    def turn(self, index: int, prompt: str) -> TurnResult:
        calls: list[ToolCall] = []  # the turn's trajectory: every call, refused ones with their error
        ran: list[ToolCall] = []  # what the script sees, as under a harness: the calls that ran
        for step_number in range(MAX_STEPS):
            self.deadline.check()
            view = ModelView(turn=index, step=step_number, prompt=prompt, tools=self.agent.tool_names,
                             tool_results=tuple(ran), conversation=tuple(self.conversation))
            step = self.model.next_step(view)
            if not step.tool_calls:
                return self._end(prompt, step.text, calls)
            check_tools(step, self.agent.tool_names, self.agent.compiled_name)
            ended = False
            for use in step.tool_calls:
                verdict = self.rules.verdict(self.agent.tools[use.tool], dict(use.args))
                if verdict.outcome == "runs":
                    ran.append(self.dispatcher.dispatch(use.tool, use.args))
                    calls.append(ran[-1])
                else:  # the harness of this dialect refuses the command (see refusals.RULES)
                    calls.append(ToolCall(tool_name=use.tool, arguments=dict(use.args), error=verdict.error))
                    ended = ended or verdict.outcome == "rejected"
            if ended:
                return self._end(prompt, "", calls)
        raise InvokerError(f"script made {MAX_STEPS} model steps without a reply()")

    def _end(self, prompt: str, text: str, calls: list[ToolCall]) -> TurnResult:
        self.conversation += [Message(role="user", text=prompt), Message(role="assistant", text=text)]
        return TurnResult(text=text, trajectory=tuple(calls))


class ScriptedInvoker:
    """Runs agent tests against `scripts` (test name → ScriptedModel / function / turn lists) from `spec`."""

    def __init__(self, scripts: Mapping[str, Any], spec: str, script_digest: str) -> None:
        self.scripts = scripts
        self.spec = spec
        self._info = InvokerInfo(name="scripted", model="scripted", script_digest=script_digest)

    @property
    def info(self) -> InvokerInfo:
        return self._info

    @contextmanager
    def session(self, agent: CompiledAgent, test: AgentTest, dispatcher: ToolDispatcher,
                deadline: Deadline) -> Iterator[ScriptedSession]:
        yield ScriptedSession(script_entry(self.scripts, test.name, self.spec), agent, dispatcher, deadline)
