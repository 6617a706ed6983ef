"""LLM judges for `llm_judge` evaluators: the `JudgeClient` protocol, a `StubJudge` for tests, an
OpenAI-compatible HTTP judge (urllib only), and `--judge` / `[tool.oac] judge` selection.

A judge answers `judge(criteria=..., target=..., model=None)` with a verdict `{pass, score, reasoning}` — a
plain mapping, or (the older form) a `JudgeVerdict` with score and reasoning; `llm_judge` reads either. A judge that raises fails the evaluator with the
error as evidence; with no judge wired, `llm_judge` evaluators skip.
"""

import json
import os
import re
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol

from open_agent_compiler.errors import OacError
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


class HttpJudge:
    """An OpenAI-compatible chat-completions judge. Network and answer problems raise (→ the evaluator FAILs)."""

    def __init__(self, base_url: str, model: str, api_key: str | None = None, timeout: float = 60.0,
                 opener: Callable[..., Any] | None = None) -> None:
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.api_key = api_key
        self.timeout = timeout
        self._open = opener

    def judge(self, *, criteria: str, target: Any, model: str | None = None) -> dict[str, Any]:
        text = target if isinstance(target, str) else json.dumps(target, default=str)
        body = {"model": model or self.model, "temperature": 0,
                "messages": [{"role": "system", "content": JUDGE_SYSTEM},
                             {"role": "user", "content": f"CRITERIA:\n{criteria}\n\nTARGET:\n{text}"}]}
        headers = {"content-type": "application/json"}
        if self.api_key:
            headers["authorization"] = f"Bearer {self.api_key}"
        import urllib.error  # imported here: a run without an HTTP judge (every warm run) does not pay for urllib
        import urllib.request

        request = urllib.request.Request(f"{self.base_url}/chat/completions", data=json.dumps(body).encode(),
                                         headers=headers, method="POST")
        try:
            with (self._open or urllib.request.urlopen)(request, timeout=self.timeout) as response:
                data = json.loads(response.read())
        except urllib.error.HTTPError as exc:
            raise RuntimeError(f"judge endpoint answered HTTP {exc.code}") from None
        except (urllib.error.URLError, OSError) as exc:
            raise RuntimeError(f"judge endpoint unreachable: {getattr(exc, 'reason', exc)}") from None
        except ValueError:
            raise RuntimeError("judge endpoint answered something that is not JSON") from None
        try:
            content = data["choices"][0]["message"]["content"]
        except (KeyError, IndexError, TypeError):
            raise RuntimeError("judge answer has no choices[0].message.content") from None
        match = re.search(r"\{.*\}", content or "", re.DOTALL)
        try:
            verdict = json.loads(match.group(0)) if match else None
        except ValueError:
            verdict = None
        if not isinstance(verdict, dict):
            raise RuntimeError(f"judge answer is not a JSON verdict: {content!r}"[:300])
        return verdict


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
    timeout = table.get("timeout", 60.0)
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or timeout <= 0:
        raise OacError(f"[tool.oac.judge] timeout must be a positive number, got {timeout!r}")
    unknown = set(table) - {"base_url", "model", "api_key_env", "timeout"}
    if unknown:
        raise OacError(f"[tool.oac.judge] has unknown key(s): {', '.join(sorted(unknown))}")
    return HttpJudge(str(base_url), str(model), os.environ.get(key_env), float(timeout))


def uses_judge(test: Any) -> bool:
    """Whether a test has an `llm_judge` evaluator (on itself or on one of its turns): its result then depends
    on the judge, so the judge is part of its key."""
    evaluators = list(test.evaluators) + [e for turn in getattr(test, "turns", ()) for e in turn.evaluators]
    return any(evaluator.kind == "llm_judge" for evaluator in evaluators)


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
