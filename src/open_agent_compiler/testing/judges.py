"""LLM judges for `llm_judge` evaluators: the `JudgeClient` protocol, a `StubJudge` for tests, an
OpenAI-compatible HTTP judge (urllib only), and `--judge` / `[tool.oac] judge` selection.

A judge answers `judge(criteria=..., target=..., model=None)` with a verdict `{pass, score, reasoning}` — a
plain mapping, or (the older form) a `JudgeVerdict` with score and reasoning; `llm_judge` reads either. A judge that raises fails the evaluator with the
error as evidence; with no judge wired, `llm_judge` evaluators skip.
"""

import json
import math
import os
import re
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol

from open_agent_compiler.errors import OacError
from open_agent_compiler.model.core.test_model import AgentTest, CapabilityTest, ToolTest
from open_agent_compiler.execution.deadline import Deadline, TimedOut, stop_at_deadline
from open_agent_compiler.testing.invokers.loading import call_factory, digest_of


class JudgeClient(Protocol):
    def judge(self, *, criteria: str, target: Any, model: str | None = None) -> Any: ...


Rule = tuple[str, Mapping[str, Any]]


class StubJudge:
    """A judge for tests. `responses` maps a criteria text to its verdict (as in the public package); `rules` are
    (regex, verdict) pairs tried in order against the target's text; the first that answers wins, else `default`.
    Every call is recorded in `calls`."""

    def __init__(self, responses: Mapping[str, Mapping[str, Any]] | None = None,
                 default: Mapping[str, Any] | None = None, rules: Sequence[Rule] = ()) -> None:
        self.responses = {criteria: dict(verdict) for criteria, verdict in (responses or {}).items()}
        self.default = dict(default or {"pass": True, "score": 1.0, "reasoning": "stub"})
        self.rules = [(re.compile(pattern), dict(verdict)) for pattern, verdict in rules]
        self.calls: list[dict[str, Any]] = []

    def judge(self, criteria: str, target: Any, *, model: str | None = None) -> dict[str, Any]:
        self.calls.append({"criteria": criteria, "target": target, "model": model})
        if criteria in self.responses:
            return self.responses[criteria]
        text = target if isinstance(target, str) else json.dumps(target, default=str)
        for pattern, verdict in self.rules:
            if pattern.search(text):
                return verdict
        return self.default


JUDGE_SYSTEM = ("You are a strict evaluator. Judge whether the TARGET meets the CRITERIA. Answer with one JSON "
                'object and nothing else: {"pass": true|false, "score": <number from 0 to 1>, "reasoning": "<one '
                'sentence>"}.')


def check_endpoint(base_url: str, timeout: Any, where: str) -> float:
    """A judge endpoint's URL is http(s) with a host; its timeout a finite number of seconds > 0. Else OacError."""
    scheme, _, rest = base_url.partition("://")
    if scheme.lower() not in ("http", "https") or not rest.split("/")[0]:
        raise OacError(f"{where} base_url must be an http:// or https:// URL, got {base_url!r}")
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not math.isfinite(timeout) \
            or timeout <= 0:
        raise OacError(f"{where} timeout must be a finite number of seconds > 0, got {timeout!r}")
    return float(timeout)


def checked_verdict(verdict: Any, answer: str) -> dict[str, Any]:
    """An HTTP judge's verdict as read: `pass` a JSON boolean (or absent), `score` a finite number in [0, 1].
    Anything else raises, with the answer as evidence (the evaluator FAILs)."""
    if not isinstance(verdict, dict):
        raise RuntimeError(f"judge answer is not a JSON verdict: {answer!r}"[:300])
    passed, score = verdict.get("pass"), verdict.get("score")
    if "pass" in verdict and not isinstance(passed, bool):
        raise RuntimeError(f"judge verdict's pass is not a JSON boolean: {answer!r}"[:300])
    if isinstance(score, bool) or not isinstance(score, (int, float)) or not math.isfinite(score) \
            or not 0.0 <= score <= 1.0:
        raise RuntimeError(f"judge verdict has no finite score in [0, 1]: {answer!r}"[:300])
    return verdict


class HttpJudge:
    """An OpenAI-compatible chat-completions judge. Network and answer problems raise (→ the evaluator FAILs).

    `timeout` is a deadline for the whole request (connect, send, every byte of the answer), enforced by the
    one deadline (`execution.deadline`); a redirect is never followed (the key is never sent anywhere else)."""

    def __init__(self, base_url: str, model: str, api_key: str | None = None, timeout: float = 60.0) -> None:
        self.timeout = check_endpoint(base_url, timeout, "http judge")
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.api_key = api_key

    def judge(self, *, criteria: str, target: Any, model: str | None = None) -> dict[str, Any]:
        text = target if isinstance(target, str) else json.dumps(target, default=str)
        body = {"model": model or self.model, "temperature": 0,
                "messages": [{"role": "system", "content": JUDGE_SYSTEM},
                             {"role": "user", "content": f"CRITERIA:\n{criteria}\n\nTARGET:\n{text}"}]}
        deadline = Deadline(self.timeout)
        try:
            status, location, raw = deadline.run(self._post, json.dumps(body).encode())
        except TimedOut as exc:
            raise RuntimeError(f"judge endpoint {exc}") from None
        except OSError as exc:
            raise RuntimeError(f"judge endpoint unreachable: {exc.strerror or exc}") from None
        if 300 <= status < 400:
            raise RuntimeError(f"judge endpoint answered HTTP {status} (a redirect to {location!r}, not followed)")
        if status != 200:
            raise RuntimeError(f"judge endpoint answered HTTP {status}")
        try:
            data = json.loads(raw)
        except ValueError:
            raise RuntimeError("judge endpoint answered something that is not JSON") from None
        try:
            content = data["choices"][0]["message"]["content"]
        except (KeyError, IndexError, TypeError):
            raise RuntimeError("judge answer has no choices[0].message.content") from None
        match = re.search(r"\{.*\}", content if isinstance(content, str) else "", re.DOTALL)
        try:
            verdict = json.loads(match.group(0)) if match else None
        except ValueError:
            verdict = None
        return checked_verdict(verdict, str(content))

    def _post(self, payload: bytes) -> tuple[int, str, bytes]:
        """(status, Location header, body) of one POST; the connection is shut down if the deadline passes."""
        import http.client  # here: a run without an HTTP judge (every warm run) does not pay for it
        import urllib.parse

        url = urllib.parse.urlsplit(f"{self.base_url}/chat/completions")
        kind = http.client.HTTPSConnection if url.scheme == "https" else http.client.HTTPConnection
        connection = kind(url.hostname or "", url.port, timeout=self.timeout)
        forget = stop_at_deadline(lambda: _shut(connection))
        try:
            headers = {"content-type": "application/json"}
            if self.api_key:
                headers["authorization"] = f"Bearer {self.api_key}"
            connection.request("POST", url.path + (f"?{url.query}" if url.query else ""), body=payload,
                               headers=headers)
            response = connection.getresponse()
            return response.status, response.getheader("location") or "", response.read()
        finally:
            forget()
            connection.close()


def _shut(connection: Any) -> None:
    """Unblock a read in another thread: shut the socket down (closing it alone does not wake a reader)."""
    import socket

    if connection.sock is not None:
        connection.sock.shutdown(socket.SHUT_RDWR)


ENV_PREFIX = "OAC_JUDGE_"


def http_judge(table: Mapping[str, Any]) -> HttpJudge:
    """From `[tool.oac.judge]` (base_url, model, api_key_env, timeout), each overridable by OAC_JUDGE_BASE_URL,
    OAC_JUDGE_MODEL, OAC_JUDGE_API_KEY. The key itself is only ever read from the environment."""
    base_url = os.environ.get(ENV_PREFIX + "BASE_URL") or table.get("base_url")
    model = os.environ.get(ENV_PREFIX + "MODEL") or table.get("model")
    if not base_url or not model:
        raise OacError("http judge needs a base URL and a model: set OAC_JUDGE_BASE_URL and OAC_JUDGE_MODEL, "
                       "or base_url and model in [tool.oac.judge]")
    key_env = str(table.get("api_key_env", ENV_PREFIX + "API_KEY"))
    unknown = set(table) - {"base_url", "model", "api_key_env", "timeout"}
    if unknown:
        raise OacError(f"[tool.oac.judge] has unknown key(s): {', '.join(sorted(unknown))}")
    timeout = check_endpoint(str(base_url), table.get("timeout", 60.0), "[tool.oac.judge]")
    return HttpJudge(str(base_url), str(model), os.environ.get(key_env), timeout)


def uses_judge(test: CapabilityTest | ToolTest | AgentTest) -> bool:
    """Whether a test has an `llm_judge` evaluator (on itself or on one of its turns): its result then depends
    on the judge, so the judge is part of its key."""
    if any(evaluator.kind == "llm_judge" for evaluator in test.evaluators):
        return True
    # only agent tests have turns (a model asked for a field it lacks raises inside pydantic: ~10 µs a test)
    turns = test.turns if isinstance(test, AgentTest) else ()
    return any(evaluator.kind == "llm_judge" for turn in turns for evaluator in turn.evaluators)


def judge_key(spec: str | Mapping[str, Any] | None, judge: Any, root: Path) -> str | None:
    """Who judges, for keys: the factory and its module's digest, or the HTTP endpoint and model."""
    if judge is None:
        return None
    if isinstance(judge, HttpJudge):
        return f"http model={judge.model} url={judge.base_url}"
    assert isinstance(spec, str)
    return f"{spec} module={digest_of(spec, root, 'judge factory')}"


def load_judge(spec: str | Mapping[str, Any] | None, root: Path) -> Any:
    """None (no judge: llm_judge evaluators skip), 'http' / a [tool.oac.judge] table, or module:factory."""
    if spec is None:
        return None
    if isinstance(spec, Mapping):
        return http_judge(spec)
    if spec == "http":
        return http_judge({})
    if ":" not in spec:
        raise OacError(f"unknown judge {spec!r}: use 'http' or module:factory")
    return call_factory(spec, root, "judge factory", lambda made: callable(getattr(made, "judge", None)),
                        "no judge() method")
