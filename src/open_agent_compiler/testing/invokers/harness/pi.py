"""Pi with `@tintinweb/pi-subagents`: compiled agents are subagents (`.pi/agents/NAME.md`), so each turn runs
`pi -p --mode json` whose main thread delegates the prompt to the agent through the extension's `Agent` tool
(follow-up turns continue the session with `-c`). The scripted model plays the agent; the turn's trajectory is
what the agent's tool commands really ran (the mock shims' calls), as Pi's events show only the delegation."""

import json
from typing import Any

from open_agent_compiler.testing.invokers.harness.base import (HarnessBinary, ModelEndpoint, Scratch, delegation,
                                                               harness_dir, json_events, provider_and_model, run_turn,
                                                               turn_failed)
from open_agent_compiler.testing.invokers.model_server import ScriptedModelServer
from open_agent_compiler.testing.invokers.protocol import CompiledAgent, Deadline, InvokerError, SubagentCall, TurnResult

DELEGATE_TOOL = "Agent"


def models_json(model: str | None, base_url: str, api_key: str | None) -> tuple[dict[str, Any], str, str]:
    """(models.json, provider, model id): the agent's own `provider/model` served at `base_url` (`.../v1`)."""
    provider, model_id = provider_and_model(model)
    entry = {"id": model_id, "name": model_id, "reasoning": False, "input": ["text"], "contextWindow": 100000,
             "maxTokens": 4000, "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0}}
    return ({"providers": {provider: {"baseUrl": base_url, "api": "openai-completions",
                                      "apiKey": api_key or "oac-dummy-key",
                                      "compat": {"supportsDeveloperRole": False}, "models": [entry]}}},
            provider, model_id)


def parse_events(stdout: str) -> tuple[str, list[SubagentCall], str]:
    """(final text, delegations, error) from `--mode json` lines."""
    text, error = "", ""
    delegations: list[SubagentCall] = []
    for event in json_events(stdout):
        message = event.get("message") if isinstance(event.get("message"), dict) else None
        if event.get("type") == "message_end" and message and message.get("role") == "assistant":
            parts = message.get("content") or []
            texts = [p.get("text", "") for p in parts if isinstance(p, dict) and p.get("type") == "text"]
            if texts:
                text = "".join(texts)
            for part in parts:
                if isinstance(part, dict) and part.get("type") == "toolCall" and part.get("name") == DELEGATE_TOOL:
                    arguments = part.get("arguments") or {}
                    delegations.append(delegation(arguments))
            if message.get("stopReason") == "error":
                error = str(message.get("errorMessage") or "model error")
    return text, delegations, error


class PiSession:
    def __init__(self, binary: HarnessBinary, agent: CompiledAgent, server: ScriptedModelServer, scratch: Scratch,
                 deadline: Deadline, started: list[int], endpoint: ModelEndpoint | None = None) -> None:
        if not binary.extension:
            raise InvokerError(f"pi: the @tintinweb/pi-subagents extension its compiled agents need is not recorded "
                               f"in {harness_dir() / 'status.json'} (pi was found as {binary.argv[-1]}): run "
                               ".ci/install-harnesses, or set HARNESS_DIR to where it installed pi")
        self.binary, self.agent, self.server, self.scratch = binary, agent, server, scratch
        self.deadline, self.started = deadline, started
        self.turns = 0
        server.delegate_tool = DELEGATE_TOOL
        self.agent_dir = scratch.home / ".pi" / "agent"
        self.agent_dir.mkdir(parents=True, exist_ok=True)
        base_url = endpoint.base_url if endpoint else server.base_url + "/v1"
        models, provider, model_id = models_json(endpoint.model if endpoint else agent.model, base_url,
                                                 endpoint.api_key if endpoint else None)
        (self.agent_dir / "models.json").write_text(json.dumps(models))
        (self.agent_dir / "settings.json").write_text(json.dumps({"defaultProvider": provider,
                                                                  "defaultModel": model_id}))

    def turn(self, index: int, prompt: str) -> TurnResult:
        self.server.begin_turn(index, prompt)
        argv = [*self.binary.argv, "--offline", "--approve", "-e", str(self.binary.extension), "--mode", "json"]
        if self.turns:
            argv.append("-c")
        code, out, err = run_turn(self.server, [*argv, "-p", prompt], self.scratch,
                                  {"PI_CODING_AGENT_DIR": str(self.agent_dir), "PI_OFFLINE": "1"},
                                  self.deadline, f"pi, turn {index}", self.started)
        text, delegations, error = parse_events(out)
        if code != 0 or error:
            raise turn_failed("pi -p", code, error, out, err)
        self.turns += 1
        self.server.end_turn(text)
        return TurnResult(text=text, trajectory=tuple(self.server.turn_calls()), subagent_calls=tuple(delegations))
