"""OpenCode: `opencode run --agent SLOT --format json`, follow-up turns with `--session ID`, against the scripted
model server (a provider entry maps the agent's own model id to it). Its JSON event lines become the turn."""

import json
from collections.abc import Callable
from typing import Any

from open_agent_compiler.model.core.evaluator import ToolCall
from open_agent_compiler.testing.invokers.harness.base import (HarnessBinary, ModelEndpoint, Scratch, delegation,
                                                               json_events, json_or_text, provider_and_model,
                                                               session_turn, shell_call_as_tool)
from open_agent_compiler.testing.invokers.model_server import ScriptedModelServer
from open_agent_compiler.testing.invokers.protocol import CompiledAgent, Deadline, SubagentCall, TurnResult

ENV = {
    "OPENCODE_DISABLE_MODELS_FETCH": "1", "OPENCODE_DISABLE_AUTOUPDATE": "1", "OPENCODE_DISABLE_DEFAULT_PLUGINS": "1",
    "OPENCODE_DISABLE_LSP_DOWNLOAD": "1", "OPENCODE_DISABLE_SHARE": "1",
}


def provider_config(model: str | None, base_url: str, api_key: str | None = None) -> dict[str, Any]:
    """opencode.json: `provider/model` served at `base_url` (an OpenAI-style `.../v1`). For the scripted server
    this is the agent's own model id, so the compiled file is run as is; also the default and small model."""
    provider, model_id = provider_and_model(model)
    return {"$schema": "https://opencode.ai/config.json", "autoupdate": False, "share": "disabled",
            "provider": {provider: {"npm": "@ai-sdk/openai-compatible", "name": provider,
                                    "options": {"baseURL": base_url, "apiKey": api_key or "oac-dummy-key"},
                                    "models": {model_id: {"name": model_id, "tool_call": True}}}},
            "model": f"{provider}/{model_id}", "small_model": f"{provider}/{model_id}"}


def config_model(model: str) -> str:
    """`provider/model` as `provider_config` names it."""
    return provider_config(model, "")["model"]


def parse_events(stdout: str, resolve: Callable[[str], tuple[str | None, dict[str, Any]]]) -> tuple[str | None, str, list[ToolCall], list[SubagentCall], str]:
    """(session id, final text, trajectory, subagent calls, error text) from `--format json` lines."""
    session: str | None = None
    texts: list[str] = []
    calls: list[ToolCall] = []
    subagents: list[SubagentCall] = []
    errors: list[str] = []
    for event in json_events(stdout):
        session = session or event.get("sessionID")
        part = event.get("part") if isinstance(event.get("part"), dict) else {}
        kind = event.get("type")
        if kind == "text" and part.get("text"):
            texts.append(part["text"])
        elif kind == "error":
            errors.append(json.dumps(event.get("error", event))[:300])
        elif kind == "tool_use":
            state = part.get("state") or {}
            arguments = state.get("input") or {}
            exit_code = (state.get("metadata") or {}).get("exit")
            error = state.get("error") if state.get("status") == "error" else None
            output = json_or_text(state.get("output"))
            if error is None and isinstance(exit_code, int) and exit_code != 0:
                error = str(output)
            name = part.get("tool", "?")
            if name == "bash":
                name, arguments = shell_call_as_tool(name, arguments, resolve)
            elif name == "task":
                subagents.append(delegation(arguments, output))
            calls.append(ToolCall(tool_name=name, arguments=arguments, output=None if error else output, error=error))
    return session, texts[-1] if texts else "", calls, subagents, "; ".join(errors)


class OpenCodeSession:
    def __init__(self, binary: HarnessBinary, agent: CompiledAgent, server: ScriptedModelServer, scratch: Scratch,
                 deadline: Deadline, started: list[int], endpoint: ModelEndpoint | None = None) -> None:
        self.binary, self.agent, self.server, self.scratch = binary, agent, server, scratch
        self.deadline, self.started = deadline, started
        self.session_id: str | None = None
        self.model_flag = ["--model", str(config_model(endpoint.model))] if endpoint else []
        config = (provider_config(endpoint.model, endpoint.base_url, endpoint.api_key) if endpoint else
                  provider_config(agent.model, server.base_url + "/v1"))
        (scratch.project / "opencode.json").write_text(json.dumps(config))

    def turn(self, index: int, prompt: str) -> TurnResult:
        self.server.begin_turn(index, prompt)
        argv = [*self.binary.argv, "run", "--agent", self.agent.compiled_name, "--format", "json", *self.model_flag]
        if self.session_id:
            argv += ["--session", self.session_id]
        session, result = session_turn(self.server, [*argv, prompt], self.scratch, ENV, self.deadline,
                                       f"opencode, turn {index}", self.started, parse_events, "opencode run")
        self.session_id = self.session_id or session
        return result
