"""Claude Code: `claude -p --agent NAME --output-format stream-json --verbose`, follow-up turns with `--resume`,
against the scripted model server speaking Anthropic Messages. Its stream-json events become the turn."""

import json
from collections.abc import Callable
from typing import Any

from open_agent_compiler.model.core.evaluator import ToolCall
from open_agent_compiler.testing.invokers.harness.base import (HarnessBinary, ModelEndpoint, Scratch, delegation,
                                                               json_events, json_or_text, session_turn,
                                                               shell_call_as_tool)
from open_agent_compiler.testing.invokers.model_server import ScriptedModelServer
from open_agent_compiler.testing.invokers.protocol import CompiledAgent, Deadline, SubagentCall, TurnResult

ENV = {
    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "DISABLE_AUTOUPDATER": "1", "DISABLE_TELEMETRY": "1",
    "DISABLE_ERROR_REPORTING": "1", "ANTHROPIC_API_KEY": "oac-dummy-key",
}


def _output(content: Any) -> Any:
    """A tool_result's content: its text blocks joined, then as any harness's tool output."""
    if isinstance(content, list):
        content = "".join(part.get("text", "") for part in content if isinstance(part, dict))
    return json_or_text(content)


def parse_events(stdout: str, resolve: Callable[[str], tuple[str | None, dict[str, Any]]]) -> tuple[str | None, str, list[ToolCall], list[SubagentCall], str]:
    """(session id, final text, trajectory, subagent calls, error) from stream-json lines."""
    session: str | None = None
    text, error = "", ""
    uses: dict[str, tuple[str, dict[str, Any]]] = {}
    order: list[str] = []
    results: dict[str, tuple[Any, bool]] = {}
    for event in json_events(stdout):
        session = session or event.get("session_id")
        content = (event.get("message") or {}).get("content") if isinstance(event.get("message"), dict) else None
        if event.get("type") == "assistant" and isinstance(content, list):
            for block in content:
                if isinstance(block, dict) and block.get("type") == "tool_use":
                    uses[block.get("id", "")] = (block.get("name", "?"), block.get("input") or {})
                    order.append(block.get("id", ""))
        elif event.get("type") == "user" and isinstance(content, list):
            for block in content:
                if isinstance(block, dict) and block.get("type") == "tool_result":
                    results[block.get("tool_use_id", "")] = (_output(block.get("content")), bool(block.get("is_error")))
        elif event.get("type") == "result":
            text = str(event.get("result") or "")
            if event.get("is_error"):
                error = text or str(event.get("subtype"))
    calls: list[ToolCall] = []
    subagents: list[SubagentCall] = []
    for use_id in order:
        name, arguments = uses[use_id]
        output, failed = results.get(use_id, (None, False))
        if name == "Bash":
            name, arguments = shell_call_as_tool(name, arguments, resolve)
        elif name in ("Agent", "Task"):
            subagents.append(delegation(arguments, output))
        calls.append(ToolCall(tool_name=name, arguments=arguments, output=None if failed else output,
                              error=str(output) if failed else None))
    return session, text, calls, subagents, error


class ClaudeSession:
    def __init__(self, binary: HarnessBinary, agent: CompiledAgent, server: ScriptedModelServer, scratch: Scratch,
                 deadline: Deadline, started: list[int], endpoint: ModelEndpoint | None = None) -> None:
        self.binary, self.agent, self.server, self.scratch = binary, agent, server, scratch
        self.deadline, self.started, self.endpoint = deadline, started, endpoint
        self.session_id: str | None = None
        self.config_dir = scratch.home / ".claude"
        self.config_dir.mkdir(parents=True, exist_ok=True)
        # trusted, so the project's .claude/settings.json permission rules apply
        (self.config_dir / ".claude.json").write_text(json.dumps(
            {"projects": {str(scratch.project): {"hasTrustDialogAccepted": True}}}))

    def turn(self, index: int, prompt: str) -> TurnResult:
        self.server.begin_turn(index, prompt)
        argv = [*self.binary.argv, "-p", "--agent", self.agent.compiled_name, "--output-format", "stream-json",
                "--verbose"]
        if self.session_id:
            argv += ["--resume", self.session_id]
        env = dict(ENV, ANTHROPIC_BASE_URL=self.server.base_url, CLAUDE_CONFIG_DIR=str(self.config_dir))
        if self.endpoint:
            argv += ["--model", self.endpoint.model]
            env.update(ANTHROPIC_BASE_URL=self.endpoint.base_url, ANTHROPIC_API_KEY=self.endpoint.api_key or "")
        session, result = session_turn(self.server, [*argv, "--", prompt], self.scratch, env, self.deadline,
                                       f"claude, turn {index}", self.started, parse_events, "claude -p")
        self.session_id = self.session_id or session
        return result
