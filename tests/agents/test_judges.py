"""LLM judges: the stub, the OpenAI-compatible HTTP judge against a loopback server, selection, and how
`llm_judge` reports verdicts, errors and a missing judge."""

import http.server
import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from open_agent_compiler import EvaluationContext, JudgeVerdict, LLMJudgeEvaluator
from open_agent_compiler.errors import OacError
from open_agent_compiler.testing.judges import HttpJudge, StubJudge, http_judge, load_judge

CRITERIA = "The answer is polite."


def judged(judge, target="thank you") -> tuple[bool, bool, str]:
    result = LLMJudgeEvaluator(criteria=CRITERIA).evaluate(EvaluationContext(target=target, judge=judge))
    return result.passed, result.skipped, result.evidence


def test_stub_judge_rules_decide_and_calls_are_recorded() -> None:
    judge = StubJudge(default={"pass": True, "score": 0.9, "reasoning": "fine"},
                      rules=[("rude", {"pass": False, "score": 0.1, "reasoning": "rude word"})])
    assert judged(judge, "thank you")[0] is True
    passed, _, evidence = judged(judge, "you are rude")
    assert passed is False and "rude word" in evidence
    assert [c["target"] for c in judge.calls] == ["thank you", "you are rude"]


def test_a_judge_saying_fail_fails_even_with_a_high_score() -> None:
    passed, _, evidence = judged(StubJudge(default={"pass": False, "score": 0.8}))
    assert passed is False and "judge says fail" in evidence


def test_older_verdict_objects_still_work_and_no_judge_skips() -> None:
    class Old:
        def judge(self, *, criteria, target):
            return JudgeVerdict(score=0.7, reasoning="ok")
    assert judged(Old())[0] is True
    assert judged(None)[1] is True


@contextmanager
def serving(handler: type) -> Iterator[str]:
    """A loopback HTTP server for `handler` while the block runs; yields its /v1 base URL."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


@contextmanager
def chat_server(answer: object, status: int = 200) -> Iterator[tuple[str, list[dict]]]:
    seen: list[dict] = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

        def do_POST(self) -> None:
            seen.append({"path": self.path, "auth": self.headers.get("authorization"),
                         "body": json.loads(self.rfile.read(int(self.headers["content-length"])))})
            body = json.dumps({"choices": [{"message": {"content": answer}}]}).encode()
            self.send_response(status)
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    with serving(Handler) as url:
        yield url, seen


def test_http_judge_asks_an_openai_compatible_endpoint() -> None:
    verdict = '```json\n{"pass": true, "score": 0.75, "reasoning": "polite"}\n```'
    with chat_server(verdict) as (url, seen):
        passed, _, evidence = judged(HttpJudge(url, "judge-model", api_key="k"))
    assert passed is True and "0.750" in evidence and "polite" in evidence
    assert seen[0]["path"] == "/v1/chat/completions" and seen[0]["auth"] == "Bearer k"
    assert seen[0]["body"]["model"] == "judge-model" and CRITERIA in seen[0]["body"]["messages"][1]["content"]


@pytest.mark.parametrize("answer, status, needle", [
    ("I think it is fine", 200, "not a JSON verdict"),
    ('{"pass": true}', 200, "no finite score"),
    ("{}", 500, "HTTP 500"),
])
def test_http_judge_errors_fail_with_the_error_as_evidence(answer: str, status: int, needle: str) -> None:
    with chat_server(answer, status) as (url, _):
        passed, skipped, evidence = judged(HttpJudge(url, "m"))
    assert passed is False and not skipped and needle in evidence


def test_unreachable_judge_fails() -> None:
    with chat_server("{}") as (url, _):
        pass  # stopped: nothing listens there any more
    passed, _, evidence = judged(HttpJudge(url, "m", timeout=5))
    assert passed is False and "unreachable" in evidence


def test_judge_selection(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert load_judge(None, tmp_path) is None
    (tmp_path / "my_judges.py").write_text("from open_agent_compiler.testing.judges import StubJudge\n"
                                           "def make():\n    return StubJudge()\n")
    assert isinstance(load_judge("my_judges:make", tmp_path), StubJudge)
    for bad, message in (("nonsense", "unknown judge"), ("my_judges:nothing", "no attribute"),
                         ({"model": "m"}, "needs a base URL"), ({"base_url": "u", "model": "m", "x": 1}, "unknown key")):
        with pytest.raises(OacError, match=message):
            load_judge(bad, tmp_path)
    monkeypatch.setenv("OAC_JUDGE_API_KEY", "secret")
    judge = http_judge({"base_url": "http://127.0.0.1:9/v1", "model": "m"})
    assert judge.api_key == "secret" and judge.model == "m"


@contextmanager
def raw_server(respond) -> Iterator[tuple[str, list[dict]]]:
    """A loopback server whose POST handler is `respond(handler)`; every request is recorded."""
    seen: list[dict] = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

        def do_POST(self) -> None:
            seen.append({"path": self.path, "auth": self.headers.get("authorization")})
            self.rfile.read(int(self.headers["content-length"]))
            respond(self)

    with serving(Handler) as url:
        yield url, seen


def test_http_judge_never_follows_a_redirect_nor_carries_its_key_there() -> None:
    verdict = json.dumps({"choices": [{"message": {"content": '{"pass": true, "score": 1}'}}]}).encode()

    def elsewhere(handler) -> None:
        handler.send_response(200)
        handler.send_header("content-length", str(len(verdict)))
        handler.end_headers()
        handler.wfile.write(verdict)

    with raw_server(elsewhere) as (other_url, other_seen):
        def redirect(handler) -> None:
            handler.send_response(307)
            handler.send_header("location", other_url + "/chat/completions")
            handler.send_header("content-length", "0")
            handler.end_headers()

        with raw_server(redirect) as (url, seen):
            passed, _, evidence = judged(HttpJudge(url, "m", api_key="secret-key"))
    assert seen and seen[0]["auth"] == "Bearer secret-key"
    assert other_seen == []  # neither the key nor the request went to the redirect target
    assert passed is False and "HTTP 307" in evidence and "not followed" in evidence


@pytest.mark.parametrize("verdict, needle", [
    ('{"pass": "false", "score": 0}', "pass is not a JSON boolean"),
    ('{"pass": 1, "score": 1}', "pass is not a JSON boolean"),
    ('{"pass": true, "score": 1.5}', "no finite score in [0, 1]"),
    ('{"pass": true, "score": -0.1}', "no finite score in [0, 1]"),
    ('{"pass": true, "score": NaN}', "no finite score in [0, 1]"),
    ('{"pass": true, "score": "1"}', "no finite score in [0, 1]"),
    ('{"pass": true, "score": true}', "no finite score in [0, 1]"),
])
def test_http_judge_takes_pass_only_as_a_boolean_and_score_only_in_range(verdict: str, needle: str) -> None:
    with chat_server(verdict) as (url, _):
        passed, skipped, evidence = judged(HttpJudge(url, "m"))
    assert passed is False and not skipped
    assert needle in evidence and verdict[:12] in evidence  # the answer itself is the evidence


def test_a_string_pass_from_any_judge_is_not_a_pass() -> None:
    passed, _, evidence = judged(StubJudge(default={"pass": "false", "score": 1.0}))
    assert passed is False and "not a boolean" in evidence


@pytest.mark.parametrize("table, needle", [
    ({"timeout": float("nan")}, "finite number"), ({"timeout": float("inf")}, "finite number"),
    ({"timeout": 1e400}, "finite number"), ({"timeout": 0}, "finite number"), ({"timeout": True}, "finite number"),
    ({"base_url": "ftp://127.0.0.1/v1"}, "http:// or https://"), ({"base_url": "file:///etc"}, "http:// or https://"),
    ({"base_url": "127.0.0.1:9/v1"}, "http:// or https://"),
])
def test_http_judge_settings_are_validated(table: dict, needle: str) -> None:
    with pytest.raises(OacError, match=needle.replace("/", "/").replace("[", r"\[")):
        http_judge({"base_url": "http://127.0.0.1:9/v1", "model": "m", **table})


def test_http_judge_timeout_is_a_deadline_for_the_whole_answer() -> None:
    """An endpoint trickling a byte a second never trips a per-read socket timeout; the deadline ends it."""
    stop = threading.Event()

    def trickle(handler) -> None:
        handler.send_response(200)
        handler.send_header("content-length", "100000")
        handler.end_headers()
        while not stop.wait(0.2):  # a byte every 0.2 s: every read succeeds well within the timeout
            try:
                handler.wfile.write(b" ")
                handler.wfile.flush()
            except OSError:
                return

    with raw_server(trickle) as (url, _):
        started = time.monotonic()
        passed, _, evidence = judged(HttpJudge(url, "m", timeout=1.5))
        took = time.monotonic() - started
        stop.set()
    assert passed is False and "timed out after 1.5s" in evidence
    assert took < 4
