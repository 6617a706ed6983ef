"""Codex: `codex exec --json` (the compiled `.codex/config.toml` makes the primary agent the main thread),
follow-up turns with `codex exec resume THREAD`, against the scripted model server speaking the Responses API.
Its JSON events become the turn."""

import json
import shlex
from collections.abc import Callable
from typing import Any

from open_agent_compiler.model.core.evaluator import ToolCall
from open_agent_compiler.testing.invokers.harness.base import (HarnessBinary, ModelEndpoint, Scratch, json_events,
                                                               json_or_text, session_turn)
from open_agent_compiler.testing.invokers.model_server import MODEL_ID, ScriptedModelServer
from open_agent_compiler.testing.invokers.protocol import CompiledAgent, Deadline, InvokerError, SubagentCall, TurnResult


KEY_ENV = "OAC_MODEL_API_KEY"


def config_toml(base_url: str, project: str, model: str = MODEL_ID, with_key: bool = False) -> str:
    """config.toml: a Responses-API provider at `base_url` (`.../v1`), the scratch project trusted."""
    key = f'env_key = "{KEY_ENV}"\n' if with_key else ""
    return (f'model_provider = "oac"\nmodel = {json.dumps(model)}\n[model_providers.oac]\nname = "oac"\n'
            f'base_url = {json.dumps(base_url)}\nwire_api = "responses"\nrequires_openai_auth = false\n{key}'
            f'request_max_retries = 0\nstream_max_retries = 0\n[projects.{json.dumps(project)}]\n'
            'trust_level = "trusted"\n')


def _inner(command: str) -> str:
    """`/bin/bash -lc 'X'` → X (Codex wraps every command in a login shell)."""
    try:
        words = shlex.split(command)
    except ValueError:
        return command
    if len(words) == 3 and words[0].endswith("sh") and words[1] in ("-lc", "-c"):
        return words[2]
    return command


def parse_events(stdout: str, resolve: Callable[[str], tuple[str | None, dict[str, Any]]]
                 ) -> tuple[str | None, str, list[ToolCall], list[SubagentCall], str]:
    """(thread id, final text, trajectory, subagent calls, error) from `--json` lines."""
    thread: str | None = None
    texts: list[str] = []
    calls: list[ToolCall] = []
    errors: list[str] = []
    for event in json_events(stdout):
        kind = event.get("type")
        thread = thread or event.get("thread_id")
        if kind in ("turn.failed", "error"):
            errors.append(json.dumps(event.get("error", event.get("message", event)))[:300])
        if kind != "item.completed" or not isinstance(event.get("item"), dict):
            continue
        item = event["item"]
        if item.get("type") == "agent_message":
            texts.append(str(item.get("text", "")))
        elif item.get("type") == "command_execution":
            command = _inner(str(item.get("command", "")))
            output = json_or_text(item.get("aggregated_output"))
            failed = item.get("exit_code") not in (0, None)
            tool, arguments = resolve(command)
            calls.append(ToolCall(tool_name=tool or "exec_command", arguments=arguments if tool else {"cmd": command},
                                  output=None if failed else output, error=str(output) if failed else None))
    return thread, texts[-1] if texts else "", calls, [], "; ".join(errors)


class CodexSession:
    def __init__(self, binary: HarnessBinary, agent: CompiledAgent, server: ScriptedModelServer, scratch: Scratch,
                 deadline: Deadline, started: list[int], endpoint: ModelEndpoint | None = None) -> None:
        self.binary, self.agent, self.server, self.scratch = binary, agent, server, scratch
        self.deadline, self.started = deadline, started
        self.env = {"CODEX_HOME": str(scratch.home / ".codex")}
        if endpoint and endpoint.api_key:
            self.env[KEY_ENV] = endpoint.api_key
        self.thread: str | None = None
        if not agent.primary:
            raise InvokerError(f"codex runs the primary agent (AGENTS.md); {agent.compiled_name!r} is a subagent")
        self.codex_home = scratch.home / ".codex"
        self.codex_home.mkdir(parents=True, exist_ok=True)
        config = (config_toml(endpoint.base_url, str(scratch.project), endpoint.model, bool(endpoint.api_key))
                  if endpoint else config_toml(server.base_url + "/v1", str(scratch.project)))
        (self.codex_home / "config.toml").write_text(config)

    def turn(self, index: int, prompt: str) -> TurnResult:
        self.server.begin_turn(index, prompt)
        # the scratch copy is the sandbox: Codex's own sandbox would cut the mock shims off from 127.0.0.1
        argv = [*self.binary.argv, "exec", "--json", "--skip-git-repo-check", "-s", "danger-full-access"]
        if self.thread:
            argv += ["resume", self.thread]
        thread, result = session_turn(self.server, [*argv, "--", prompt], self.scratch, self.env, self.deadline,
                                      f"codex, turn {index}", self.started, parse_events, "codex exec")
        self.thread = self.thread or thread
        return result
