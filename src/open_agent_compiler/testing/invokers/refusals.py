"""What each harness does with a tool's command in a non-interactive agent-test run, by the action the compiled
agent gives it — the one rule the `scripted` simulator applies, measured against the real harnesses
(tests/agents/test_permission_agreement.py):

| harness | allow | ask | deny |
|---|---|---|---|
| OpenCode (`opencode run`) | runs | rejected, and the turn ends there | refused; the model goes on |
| Claude Code (`claude -p`, `permissionMode: dontAsk`) | runs | refused; the model goes on | refused; the model goes on |
| Codex (`codex exec`), Pi (`pi -p`) | runs | runs | runs (no per-command rules: the instructions say it) |

The action is read from the compiled agent in the build, as the harness computes it (`testing.permissions`).
A tool the agent does not have cannot be called in any of them (`script.check_tools`), nor can a call that is no
command a harness could run (a tool without a command pattern, or input for a pattern without a trailing `*`):
the test fails, in the simulator as under a harness.
"""

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from open_agent_compiler.errors import OacError
from open_agent_compiler.model.core.capabilities import Capabilities
from open_agent_compiler.model.core.tool import ToolDefinition
from open_agent_compiler.testing.artifacts import load_capabilities
from open_agent_compiler.testing.invokers.commands import command_for, command_pattern
from open_agent_compiler.testing.invokers.protocol import CompiledAgent
from open_agent_compiler.testing.permissions import bash_action

Outcome = Literal["runs", "refused", "rejected"]  # rejected: refused, and the harness ends the turn

RULES: dict[str, dict[str, Outcome]] = {
    "opencode": {"allow": "runs", "ask": "rejected", "deny": "refused"},
    "claude": {"allow": "runs", "ask": "refused", "deny": "refused"},
    "codex": {"allow": "runs", "ask": "runs", "deny": "runs"},
    "pi": {"allow": "runs", "ask": "runs", "deny": "runs"},
}

WHY = {
    ("opencode", "ask"): "`opencode run` rejects every permission request, and the turn ends",
    ("opencode", "deny"): "OpenCode refuses commands its rules deny",
    ("claude", "ask"): "Claude Code runs the agent with permissionMode: dontAsk, which refuses what an ask rule covers",
    ("claude", "deny"): "Claude Code refuses commands its rules deny",
}


class Verdict(BaseModel):
    model_config = ConfigDict(frozen=True)

    outcome: Outcome
    action: str
    error: str | None = None  # the refusal as the simulator reports it


class HarnessRules:
    """Verdicts for one agent under the harness of its dialect (other dialects: everything runs)."""

    def __init__(self, agent: CompiledAgent) -> None:
        self.agent = agent
        try:
            self._caps: Capabilities | None = load_capabilities(agent.build_dir, agent.compiled_name, agent.dialect)
        except OacError:  # no build to read (an invoker used outside `oac test`): the tool's own grant decides
            self._caps = None

    def verdict(self, tool: ToolDefinition, args: dict[str, Any]) -> Verdict:
        found = command_pattern(tool)
        command = command_for(tool, args)  # a call no harness could run fails the test here as there
        assert found is not None
        action = bash_action(self._caps, command)[0] if self._caps is not None else found[1]
        outcome = RULES.get(self.agent.dialect, {}).get(action, "runs")
        if outcome == "runs":
            return Verdict(outcome=outcome, action=action)
        why = WHY.get((self.agent.dialect, action), f"{self.agent.dialect} refuses it")
        return Verdict(outcome=outcome, action=action,
                       error=f"refused: `{command}` is {action} for agent {self.agent.compiled_name!r}; {why}")
