"""Cassettes: the loopback model server records a test's model exchanges through a proxy to a provider (here a
fake upstream on 127.0.0.1), then replays them with nothing leaving the machine; a request that differs FAILs
naming the turn and the first difference; the key never lands in a file."""

import json
import shutil
import subprocess
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings, strategies as st

from open_agent_compiler.history.log import TestOutcome
from open_agent_compiler.testing.invokers.cassette import (Location, Memo, Tape, Upstream, at, first_difference,
                                                           legacy_rel, normalized, read_cassette, upstream_from)
from open_agent_compiler.testing.invokers.harness import HarnessInvoker
from open_agent_compiler.testing.invokers.harness.base import HarnessBinary
from open_agent_compiler.testing.invokers.model_server import ScriptedModelServer
from open_agent_compiler.testing.invokers.protocol import (CompiledAgent, InvokerError, InvokerNotRunnable,
                                                           ToolDispatcher)
from open_agent_compiler.testing.invokers.script import ScriptedModel
from open_agent_compiler.testing.mocks import MockSession

from agent_project import OAC, REPO, harness_or_skip, summary
from fake_upstream import COOKIE, FakeUpstream
from open_agent_compiler.execution.leftovers import PREFIX, sibling_pattern

PLANTED = "sk-oac-PLANTED-4f1d9e0c7b"
BESIDE = "cassettes/agents/primary/quiet-alert-quiet.jsonl"  # the monitoring example's test, defined in agents.py
NO_PROXY = urllib.request.build_opener(urllib.request.ProxyHandler({}))

# (api, path, a request as a harness sends it: stream or not)
REQUESTS: list[tuple[str, str, dict[str, Any]]] = [
    ("chat", "/v1/chat/completions", {"model": "m", "stream": True, "tools": [
        {"type": "function", "function": {"name": "read"}}, {"type": "function", "function": {"name": "bash"}}],
        "messages": [{"role": "system", "content": "You watch api. Today is 2026-01-02, run 0b9f6c2a-1111-2222-3333-444455556666."},
                     {"role": "user", "content": "check api"}]}),
    ("responses", "/v1/responses", {"model": "m", "stream": True, "prompt_cache_key": "0b9f6c2a-1111-2222-3333-444455556666",
                                    "tools": [{"type": "function", "name": "exec_command"}],
                                    "input": [{"type": "message", "role": "user", "content": "check api"}]}),
    ("messages", "/v1/messages", {"model": "m", "stream": True, "metadata": {"user_id": "session-123"},
                                  "system": [{"type": "text", "text": "You watch api."}],
                                  "tools": [{"name": "Bash"}], "messages": [{"role": "user", "content": "check api"}]}),
    ("messages", "/v1/messages", {"model": "m", "tools": [{"name": "Bash"}],
                                  "messages": [{"role": "user", "content": "check api"}]}),
]


def tape_at(path: Path, *args: Any) -> Tape:
    """A tape whose cassette is the file `path` (read from there when it exists)."""
    return Tape(at(path.parent, path.name), *args)


def agent() -> CompiledAgent:
    return CompiledAgent(dialect="claude", build_dir=Path("."), project_root=Path("."), slot="p", compiled_name="p")


def server_with(tape: Tape) -> ScriptedModelServer:
    server = ScriptedModelServer(ScriptedModel(turns=[]), agent(),
                                 ToolDispatcher({}, None, MockSession(), hermetic=True, timeout=1))
    server.tape = tape
    return server


def post(server: ScriptedModelServer, path: str, body: dict[str, Any]) -> tuple[int, bytes]:
    request = urllib.request.Request(server.base_url + path, data=json.dumps(body).encode(),
                                     headers={"content-type": "application/json", "authorization": "Bearer dummy",
                                              "x-api-key": "dummy", "anthropic-version": "2023-06-01"})
    try:
        with NO_PROXY.open(request, timeout=30) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()


def with_volatile(body: dict[str, Any]) -> dict[str, Any]:
    """The same request as another run sends it: other ids, another date."""
    text = json.dumps(body).replace("2026-01-02", "2027-12-31").replace("0b9f6c2a", "7e7e7e7e")
    changed = json.loads(text.replace("session-123", "session-999"))
    if isinstance(changed.get("tools"), list):
        changed["tools"] = list(reversed(changed["tools"]))
    return changed


@pytest.mark.parametrize("api,path,body", REQUESTS, ids=[f"{r[0]}-{'stream' if r[2].get('stream') else 'plain'}"
                                                         for r in REQUESTS])
def test_record_through_the_proxy_then_replay_with_the_upstream_stopped(api: str, path: str, body: dict[str, Any],
                                                                        tmp_path: Path) -> None:
    cassette = tmp_path / "cassettes" / "t.jsonl"
    with FakeUpstream() as fake:
        tape = tape_at(cassette, "t", "all", Upstream(base_url=fake.base_url, api_key=PLANTED, model="real-model"))
        with server_with(tape) as server:
            server.begin_turn(1, "check api")
            status, recorded = post(server, path, body)
            tape.save()
        assert status == 200 and recorded and len(fake.bodies) == 1
        assert fake.bodies[0]["model"] == "real-model"  # the upstream's model, not the harness's id
    assert PLANTED not in cassette.read_text()
    header, exchanges = read_cassette(cassette)
    assert header["model"] == "real-model" and [(e.turn, e.api, e.path) for e in exchanges] == [(1, api, path)]

    replay = tape_at(cassette, "t", "none", None)
    with server_with(replay) as server:  # the upstream is gone: the answer can only come from the cassette
        server.begin_turn(1, "check api")
        assert post(server, path, with_volatile(body)) == (200, recorded)
        assert not server.errors


def test_the_proxy_passes_on_no_credential_nor_cookie_either_way(tmp_path: Path) -> None:
    """The harness's own credentials and cookies never reach the provider (only the upstream key does), and the
    provider's cookies never reach the harness or the cassette."""
    cassette = tmp_path / "c.jsonl"
    _, path, body = REQUESTS[2]
    with FakeUpstream(leaky=True) as fake:
        tape = tape_at(cassette, "t", "all", Upstream(base_url=fake.base_url, api_key=PLANTED))
        with server_with(tape) as server:
            server.begin_turn(1, "x")
            request = urllib.request.Request(server.base_url + path, data=json.dumps(body).encode(), headers={
                "content-type": "application/json", "x-api-key": "harness-key-SECRET",
                "authorization": "Bearer harness-SECRET", "cookie": "harness=cookie-SECRET"})
            with NO_PROXY.open(request, timeout=30) as response:
                headers, answer = dict(response.headers), response.read()
            tape.save()
    assert fake.credentials == [PLANTED] and fake.cookies == []  # the upstream key replaced the harness's
    assert not any("SECRET" in json.dumps(b) for b in fake.bodies)
    assert "set-cookie" not in {name.lower() for name in headers} and COOKIE.encode() not in answer
    stored = cassette.read_text()
    assert COOKIE not in stored and "SECRET" not in stored and PLANTED not in stored


def _after_a_check(folder: str, api: str) -> dict[str, Any]:
    """A request after the health check's output, from a harness working in `folder` (streamed)."""
    if api == "messages":
        return {"model": "m", "stream": True, "tools": [{"name": "Bash"}], "system": f"Working in {folder}",
                "messages": [{"role": "user", "content": "check api"},
                             {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "Bash",
                                                                "input": {"command": "x"}}]},
                             {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1",
                                                           "content": "status ok"}]}]}
    return {"model": "m", "stream": True, "tools": [{"type": "function", "function": {"name": "bash"}}],
            "messages": [{"role": "system", "content": f"Working in {folder}"}, {"role": "user", "content": "check api"},
                         {"role": "assistant", "tool_calls": [{"id": "t1", "type": "function",
                                                               "function": {"name": "bash", "arguments": "{}"}}]},
                         {"role": "tool", "tool_call_id": "t1", "content": "status ok"}]}


@pytest.mark.parametrize("api,path", [("messages", "/v1/messages"), ("chat", "/v1/chat/completions")])
def test_an_answer_naming_the_scratch_folder_replays_with_the_new_one(api: str, path: str, tmp_path: Path) -> None:
    """A model names files by their absolute path: the cassette stores the recording run's scratch folder (and
    the key the upstream echoed) as labels even where the stream cut them, and a replay in another folder
    answers with that folder, so the harness's next request, echoing it, matches."""
    cassette = tmp_path / "c.jsonl"
    first, second = "/tmp/oac-invoke-rec0rd/project", "/tmp/oac-invoke-r3play/project"
    with FakeUpstream(leaky=True, split=3, names_folder=True) as fake:
        tape = tape_at(cassette, "t", "all", Upstream(base_url=fake.base_url, api_key=PLANTED))
        tape.volatile = ((first.removesuffix("/project"), "<scratch>"),)
        with server_with(tape) as server:
            server.begin_turn(1, "check api")
            status, recorded = post(server, path, _after_a_check(first, api))
            tape.save()
    assert status == 200
    stored = cassette.read_text()
    assert "/tmp/oac-invoke" not in stored and PLANTED not in stored
    assert json.loads(stored.splitlines()[0])["cassette"] == 2
    joined = _assembled(api, recorded.decode())  # the recording harness got its own folder back
    assert "all quiet (checked from /tmp/oac-invoke-rec0rd/project) (sent with " in joined, joined
    assert joined.endswith("<redacted>)") and PLANTED not in recorded.decode()

    replay = tape_at(cassette, "t", "none", None)
    replay.volatile = ((second.removesuffix("/project"), "<scratch>"),)
    with server_with(replay) as server:
        server.begin_turn(1, "check api")
        status, replayed = post(server, path, _after_a_check(second, api))
        assert status == 200 and not server.errors
    assert _assembled(api, replayed.decode()) == joined.replace(first, second)


def test_another_runs_scratch_folder_in_a_request_is_normalised_like_this_runs() -> None:
    """An answer recorded before labels (a version-1 cassette) names the recording run's folder, which the
    harness echoes: any oac scratch folder beside this run's is `<scratch>`, nothing else is."""
    root = Path("/tmp") / (PREFIX + "n0w_1")
    volatile = ((str(root), "<scratch>"), (sibling_pattern(root), "<scratch>"))
    request = {"text": f"ran in /tmp/{PREFIX}0ld9x/project, now {root}/project; /tmp/other-dir and /var/{PREFIX}abc"}
    assert normalized(request, volatile) == {
        "text": f"ran in <scratch>/project, now <scratch>/project; /tmp/other-dir and /var/{PREFIX}abc"}


def _assembled(api: str, stream: str) -> str:
    """The text a harness assembles from a streamed answer."""
    events = [json.loads(line[5:]) for line in stream.split("\n") if line.startswith("data:") and "{" in line]
    if api == "messages":
        return "".join(e["delta"].get("text", "") for e in events if e.get("type") == "content_block_delta")
    return "".join((e["choices"][0]["delta"].get("content") or "") for e in events if e.get("choices"))


def test_a_changed_request_fails_naming_the_first_difference(tmp_path: Path) -> None:
    cassette = tmp_path / "c.jsonl"
    _, path, body = REQUESTS[2]
    with FakeUpstream() as fake:
        tape = tape_at(cassette, "t", "once", Upstream(base_url=fake.base_url))
        with server_with(tape) as server:
            server.begin_turn(2, "x")
            post(server, path, body)
            tape.save()
    edited = json.loads(json.dumps(body).replace("You watch api.", "You watch web."))
    with server_with(tape_at(cassette, "t", "none", None)) as server:
        server.begin_turn(2, "x")
        status, _ = post(server, path, edited)
        assert status == 400
        assert "system[0].text" in server.errors[0] and "You watch web." in server.errors[0]
        server.begin_turn(3, "y")  # nothing recorded for turn 3
        post(server, path, body)
        assert "matches no recorded exchange of turn 3" in server.errors[1]


def test_recording_without_an_upstream_is_one_clear_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("OAC_RECORD_BASE_URL", "OAC_RECORD_API_KEY", "OAC_RECORD_MODEL"):
        monkeypatch.delenv(name, raising=False)
    with pytest.raises(InvokerError, match="OAC_RECORD_BASE_URL"):
        tape_at(tmp_path / "c.jsonl", "t", "all", None)
    monkeypatch.setenv("OAC_RECORD_BASE_URL", "http://127.0.0.1:9/")
    monkeypatch.setenv("OAC_RECORD_API_KEY", PLANTED)
    upstream = upstream_from()
    assert upstream is not None and upstream.api_key == PLANTED and upstream.base_url == "http://127.0.0.1:9"
    assert PLANTED not in repr(upstream) and PLANTED not in str(upstream)


def test_no_cassette_and_no_script_is_not_runnable_and_none_mode_needs_the_cassette(tmp_path: Path) -> None:
    binary = HarnessBinary(name="claude", argv=("claude",), version="1")
    compiled = agent().model_copy(update={"project_root": tmp_path})
    from open_agent_compiler.model.core.test_model import AgentTest, Turn

    test = AgentTest(name="t", turns=(Turn(prompt="p"),))
    invoker = HarnessInvoker("claude", binary, {}, "s:SCRIPTS", None)
    with pytest.raises(InvokerNotRunnable, match="no cassette cassettes/p/t.jsonl"):  # defined outside the root
        invoker.tape(compiled, test)
    scripted = HarnessInvoker("claude", binary, {"t": object()}, "s:SCRIPTS", None)
    assert scripted.tape(compiled, test) is None  # a script and no cassette: runs scripted, as before
    scripted.use_cassettes("none", None)
    with pytest.raises(InvokerNotRunnable, match="recording is off"):
        scripted.tape(compiled, test)
    assert "record=none" in scripted.info.key()
    (tmp_path / "cassettes" / "p").mkdir(parents=True)
    (tmp_path / "cassettes" / "p" / "t.jsonl").write_text('{"cassette": 1}\n')
    assert invoker.tape(compiled, test) is not None  # a cassette: replayed, whatever the script


def test_not_runnable_outcome_from_the_runner() -> None:
    from open_agent_compiler.testing import agent_runner

    class Refusing:
        info = None

        def session(self, *args: Any) -> Any:
            raise InvokerNotRunnable("no cassette cassettes/t.jsonl (recording is off): record it with --record")

    from open_agent_compiler.model.core.test_model import AgentTest, Turn
    from open_agent_compiler.testing.discovery import TestCase

    case = TestCase.model_construct(test=AgentTest(name="t", turns=(Turn(prompt="p"),)), slot="p", mock_profile=None)

    class Settings:
        project_root = Path(".")
        build_dir = Path(".")
        dialect = "claude"
        hermetic = True
        timeout = 5.0
        judge = None

    class Resolved:
        mock_profiles: dict = {}

        def agent(self, slot: str) -> Any:
            class A:
                model_parameters = None
                slot = "p"
                compiled_name = "p"
                primary = True
                tools: tuple = ()
            return A()

    result: TestOutcome = agent_runner.run_agent_test(case, Resolved(), Settings(), Refusing())
    assert result.status == "not_runnable" and "recording is off" in (result.skip_reason or "")


text_leaf = st.text(alphabet="abcdefghij XYZ.", min_size=1, max_size=12)
json_values = st.recursive(text_leaf | st.integers(0, 9) | st.booleans(),
                           lambda inner: st.lists(inner, max_size=3)
                           | st.dictionaries(st.sampled_from(["a", "b", "content", "role"]), inner, max_size=3),
                           max_leaves=12)


@settings(max_examples=60, deadline=None)
@given(json_values, st.data())
def test_matching_ignores_nothing_but_what_varies(value: Any, data: st.DataObject) -> None:
    """Oracle: text without ids, dates or volatile paths normalizes to itself, and changing any one leaf is a
    difference `first_difference` names."""
    assert normalized(value) == value
    leaves: list[tuple[Any, ...]] = []

    def walk(node: Any, where: tuple[Any, ...]) -> None:
        if isinstance(node, dict):
            for key, item in node.items():
                walk(item, (*where, key))
        elif isinstance(node, list):
            for index, item in enumerate(node):
                walk(item, (*where, index))
        else:
            leaves.append(where)
    walk(value, ())
    assert first_difference(value, value) is None
    if not leaves or not leaves[0] and not isinstance(value, str):
        return
    where = data.draw(st.sampled_from(leaves))
    changed = json.loads(json.dumps(value))
    if not where:
        changed = ["different"]
    else:
        node = changed
        for step in where[:-1]:
            node = node[step]
        node[where[-1]] = "QQ-changed" if node[where[-1]] != "QQ-changed" else "QQ-other"
    assert normalized(changed) != normalized(value)
    assert first_difference(normalized(value), normalized(changed)) is not None


# ---- through the real harnesses -------------------------------------------------------------------------------
def _available(name: str) -> None:
    harness_or_skip(name)


def _loopback_only() -> list[str]:
    """argv prefix running a command in a network namespace with loopback only (nothing can leave 127.0.0.1)."""
    probe = subprocess.run(["unshare", "-n", "sh", "-c", "ip link set lo up"], capture_output=True)
    if probe.returncode != 0:
        pytest.skip("unshare -n is not permitted here: cannot prove nothing leaves the machine")
    return ["unshare", "-n", "sh", "-c", 'ip link set lo up && exec "$@"', "oac-replay"]


def _oac(root: Path, *args: str, env: dict[str, str] | None = None, prefix: list[str] | None = None
         ) -> subprocess.CompletedProcess[str]:
    import os

    full_env = {k: v for k, v in os.environ.items() if not k.startswith("OAC_RECORD_")}
    full_env.update(env or {})
    return subprocess.run([*(prefix or []), OAC, "test", *args], cwd=root, capture_output=True, text=True,
                          timeout=500, env=full_env)


SECRETS = (PLANTED, f"Bearer {PLANTED}", COOKIE, f"oac_session={COOKIE}")


def assert_no_secret(folder: Path, outputs: list[subprocess.CompletedProcess[str]], expected: list[Path]) -> None:
    """No planted secret in any file under `folder` (every file the runs wrote: cassette, results, state,
    report) nor in any output; `expected` files must be among them (the grep is not vacuous)."""
    files = [path for path in folder.rglob("*") if path.is_file() and not path.is_symlink()]
    assert set(expected) <= set(files), set(expected) - set(files)
    assert any(part == ".oac" for path in files for part in path.parts)  # the state was written and is read
    for path in files:
        data = path.read_bytes()
        for secret in SECRETS:
            assert secret.encode() not in data, f"{secret!r} in {path}"
    for done in outputs:
        for secret in SECRETS:
            assert secret not in done.stdout + done.stderr, f"{secret!r} in the output of {done.args}"


def _turns(root: Path) -> list[Any]:
    records = [json.loads(line) for line in (root / ".oac" / "test_results.jsonl").read_text().splitlines()]
    return [record.get("turns") for record in records if record.get("test_kind") == "agent"]


@pytest.mark.harness
@pytest.mark.parametrize("harness", ["claude", "opencode", "codex", "pi"])
def test_record_then_replay_through_the_real_harness(harness: str, tmp_path: Path) -> None:
    _available(harness)
    root = tmp_path / "monitoring"
    shutil.copytree(REPO / "examples" / "monitoring", root, ignore=shutil.ignore_patterns(".oac", "__pycache__"))
    (root / "agents_scripts.py").unlink()  # no script: the model is the upstream's, then the cassette's
    run = ("--invoker", harness, "--dialect", harness)
    # sets a cookie, echoes the credentials it gets in its answers, streams in pieces, names the working folder
    with FakeUpstream(leaky=True, split=5, names_folder=True) as fake:
        recording = _oac(root, *run, "--record", "all", "-v",
                         env={"OAC_RECORD_BASE_URL": fake.base_url, "OAC_RECORD_API_KEY": PLANTED})
        assert "passed=1" in summary(recording.stdout), recording.stdout + recording.stderr
        upstream_requests = len(fake.bodies)
    assert upstream_requests >= 3
    assert fake.credentials and all(PLANTED in credential for credential in fake.credentials)  # the key was used
    cassette = root / BESIDE  # beside agents.py, which defines the test
    assert not (root / legacy_rel("quiet-alert-quiet")).exists()
    _, exchanges = read_cassette(cassette)
    assert {e.turn for e in exchanges} == {1, 2, 3}
    # the answers named the recording run's scratch folder, stored as a label: the replay runs in another one
    assert any("<scratch>" in e.response for e in exchanges) and "/" + PREFIX not in cassette.read_text()

    replay = _oac(root, *run, "-v", prefix=_loopback_only())  # upstream stopped, and no route off 127.0.0.1
    assert "passed=1" in summary(replay.stdout), replay.stdout + replay.stderr
    recorded_turns, replayed_turns = _turns(root)[-2:]
    assert replayed_turns == recorded_turns == [["check-health"], ["check-health", "page-oncall"], ["check-health"]]
    again = _oac(root, *run, "--explain")
    assert "skipped=1" in summary(again.stdout), again.stdout  # a green replayed test is skipped like any other

    # the planted key, the authorization header and the cookie are in no file the two runs wrote (cassette,
    # results, state, the report, the --explain view) and in no output
    report = tmp_path / "report.html"
    reported = subprocess.run([OAC, "report", "-o", str(report)], cwd=root, capture_output=True, text=True,
                              timeout=120)
    assert reported.returncode == 0 and report.stat().st_size > 0, reported.stderr
    outputs = [recording, replay, again, reported]
    assert_no_secret(tmp_path, outputs, [cassette, root / ".oac" / "test_results.jsonl", report])
    assert "<redacted>)" in cassette.read_text()  # the upstream's echo of the key happened, and was scrubbed

    # a prompt edit (the primary agent's prompt reaches the model in every harness, Codex included): the replay
    # FAILs naming the turn and the difference; --record of that test fixes it
    agents = root / "agents.py"
    agents.write_text(agents.read_text().replace("Answer 'all quiet'", "Answer exactly 'all quiet'"))
    failed = _oac(root, *run, "-v")
    assert "failed=1" in summary(failed.stdout), failed.stdout
    assert "turn 1: " in failed.stdout and "request differs from the recorded one" in failed.stdout
    assert "exactly" in failed.stdout and BESIDE in failed.stdout, failed.stdout
    with FakeUpstream(leaky=True, split=5, names_folder=True) as fake:
        fixed = _oac(root, *run, "--record", "all", "-k", "quiet-alert-quiet",
                     env={"OAC_RECORD_BASE_URL": fake.base_url, "OAC_RECORD_API_KEY": PLANTED})
    assert "passed=1" in summary(fixed.stdout), fixed.stdout + fixed.stderr
    replayed = _oac(root, *run, "--explain", prefix=_loopback_only())
    assert "passed=1" in summary(replayed.stdout)
    assert_no_secret(tmp_path, [failed, fixed, replayed], [cassette])  # the failure's evidence included


SECOND_TEST = '''
            AgentTest(name="quiet-once", mock_profile="incident", timeout_s=120, turns=(
                Turn(prompt="is api up?", expected_tool_calls=("check-health",),
                     evaluators=(SubstringEvaluator(needle="all quiet"),)),)),
'''


@pytest.mark.harness
def test_a_re_recorded_test_is_the_only_one_that_runs_again(tmp_path: Path) -> None:
    """Two agent tests with cassettes; one test's prompt edited: only it fails, `--record -k` records only it, and
    afterwards only it runs again (its cassette changed) while the other stays a green skip."""
    _available("claude")
    root = tmp_path / "monitoring"
    shutil.copytree(REPO / "examples" / "monitoring", root, ignore=shutil.ignore_patterns(".oac", "__pycache__"))
    (root / "agents_scripts.py").unlink()
    agents = root / "agents.py"
    source = agents.read_text()
    agents.write_text(source.replace("\n        ],\n    )", SECOND_TEST + "        ],\n    )", 1))
    run = ("--invoker", "claude", "--dialect", "claude")
    with FakeUpstream(split=5) as fake:
        recorded = _oac(root, *run, "--record", "all", env={"OAC_RECORD_BASE_URL": fake.base_url})
    assert "passed=2" in summary(recorded.stdout), recorded.stdout + recorded.stderr
    second = root / BESIDE.replace("quiet-alert-quiet", "quiet-once")
    first_bytes, second_bytes = (root / BESIDE).read_bytes(), second.read_bytes()
    assert "passed=2" in summary(_oac(root, *run).stdout)  # both replayed (a --record run is keyed apart)
    assert "skipped=2" in summary(_oac(root, *run).stdout)

    agents.write_text(agents.read_text().replace('"is api up?"', '"is api up now?"'))
    failed = _oac(root, *run, "-v")
    assert "failed=1" in summary(failed.stdout) and "skipped=1" in summary(failed.stdout), failed.stdout
    assert "'quiet-once': invoker: turn 1: messages request differs" in failed.stdout and "now?" in failed.stdout
    with FakeUpstream(split=5) as fake:
        fixed = _oac(root, *run, "--record", "all", "-k", "quiet-once", env={"OAC_RECORD_BASE_URL": fake.base_url})
    assert summary(fixed.stdout).startswith("oac test: discovered=1 passed=1"), fixed.stdout + fixed.stderr
    assert (root / BESIDE).read_bytes() == first_bytes and second.read_bytes() != second_bytes  # only its cassette
    after = _oac(root, *run, "-v")
    assert "passed=1" in summary(after.stdout) and "skipped=1" in summary(after.stdout), after.stdout
    assert "PASS 'quiet-once'" in after.stdout or "pass 'quiet-once'" in after.stdout, after.stdout
    assert "skipped=2" in summary(_oac(root, *run).stdout)


def test_record_needs_a_harness_invoker(tmp_path: Path) -> None:
    root = tmp_path / "monitoring"
    shutil.copytree(REPO / "examples" / "monitoring", root, ignore=shutil.ignore_patterns(".oac", "__pycache__"))
    result = _oac(root, "--record")
    assert result.returncode == 2 and "--record needs a harness invoker" in result.stderr
    assert "Traceback" not in result.stderr


def test_oac_cassettes_lists_and_prunes_only_unused_cassettes(tmp_path: Path) -> None:
    root = tmp_path / "monitoring"
    shutil.copytree(REPO / "examples" / "monitoring", root, ignore=shutil.ignore_patterns(".oac", "__pycache__"))
    folder = root / "cassettes"
    (root / BESIDE).parent.mkdir(parents=True)
    (root / BESIDE).write_text('{"cassette": 1, "test": "quiet-alert-quiet", "model": "m0"}\n')
    (folder / "agents" / "primary" / "gone-test.jsonl").write_text('{"cassette": 1, "test": "gone-test"}\n')
    (folder / "quiet-alert-quiet.jsonl").write_text('{"cassette": 1, "test": "quiet-alert-quiet", "model": "m1"}\n')
    (folder / "gone-test.jsonl").write_text('{"cassette": 1, "test": "gone-test", "model": "m2"}\n')
    (folder / "notes.txt").write_text("not a cassette")
    (folder / "data.jsonl").write_text('{"not": "a cassette"}\n')  # no cassette header: never ours to remove
    listed = subprocess.run([OAC, "cassettes"], cwd=root, capture_output=True, text=True, timeout=120)
    assert listed.returncode == 0, listed.stderr
    lines = listed.stdout.splitlines()
    assert any(line.startswith(f"{BESIDE}  used  model=m0") for line in lines), lines
    assert any(line.startswith("cassettes/agents/primary/gone-test.jsonl  unused") for line in lines), lines
    # the old location: superseded by the one beside the definition, so unused too
    assert any(line.startswith("cassettes/quiet-alert-quiet.jsonl  unused  model=m1") and
               line.endswith("(old location)") for line in lines), lines
    assert any(line.startswith("cassettes/gone-test.jsonl  unused  model=m2") for line in lines), lines
    assert lines[-1] == "oac cassettes: 4 cassettes, 3 unused"
    (root / BESIDE).unlink()  # without it, the old location's cassette is the one the test reads
    relisted = subprocess.run([OAC, "cassettes"], cwd=root, capture_output=True, text=True, timeout=120).stdout
    assert "cassettes/quiet-alert-quiet.jsonl  used  model=m1" in relisted, relisted
    pruned = subprocess.run([OAC, "cassettes", "--prune"], cwd=root, capture_output=True, text=True, timeout=120)
    assert pruned.returncode == 0
    assert sorted(p.name for p in folder.iterdir()) == ["agents", "data.jsonl", "notes.txt", "quiet-alert-quiet.jsonl"]
    assert list((folder / "agents" / "primary").iterdir()) == []


def test_a_cassette_lives_beside_the_module_defining_its_test(tmp_path: Path) -> None:
    from open_agent_compiler.model.core.test_model import AgentTest, Turn
    from open_agent_compiler.testing.invokers.cassette import beside_rel, locate

    test = AgentTest(name="three turns", turns=(Turn(prompt="p"),))  # defined here: outside tmp_path
    assert beside_rel(tmp_path, test, "p").startswith("cassettes/p/three_turns-")
    inside = test.model_copy()
    inside.__dict__["_oac_defined_at"] = (str(tmp_path / "pkg" / "ops_agents.py"), 7)
    rel = beside_rel(tmp_path, inside, "primary")
    assert rel.startswith("pkg/cassettes/ops_agents/primary/three_turns-") and rel.endswith(".jsonl")
    # the old location is read while the new one is missing; the new one wins once written
    (tmp_path / legacy_rel("three turns")).parent.mkdir()
    (tmp_path / legacy_rel("three turns")).write_text('{"cassette": 1}\n')
    where = locate(tmp_path, inside, "primary")
    assert where.found == "cassettes/three_turns.jsonl" and where.legacy and where.rel == rel
    (tmp_path / rel).parent.mkdir(parents=True)
    (tmp_path / rel).write_text('{"cassette": 1}\n')
    assert locate(tmp_path, inside, "primary").found == rel and not locate(tmp_path, inside, "primary").legacy


def test_a_recording_never_writes_through_a_symlink_nor_outside_the_root(tmp_path: Path) -> None:
    from open_agent_compiler.testing.invokers.cassette import Location, write_cassette

    outside = tmp_path / "outside"
    outside.mkdir()
    root = tmp_path / "project"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "cassettes").symlink_to(outside)
    with pytest.raises(InvokerError, match="symbolic link"):
        write_cassette(root, "pkg/cassettes/m/p/t.jsonl", "t", None, [])
    with pytest.raises(InvokerError, match="not inside"):
        write_cassette(root, "../outside/t.jsonl", "t", None, [])
    with FakeUpstream() as fake, pytest.raises(InvokerError, match="symbolic link"):  # refused before recording
        Tape(at(root, "pkg/cassettes/m/p/t.jsonl"), "t", "all", Upstream(base_url=fake.base_url))
    assert list(outside.iterdir()) == [] and fake.bodies == []
    (outside / "m" / "p").mkdir(parents=True)
    (outside / "m" / "p" / "t.jsonl").write_text('{"cassette": 1}\n')  # not read through the link either
    assert at(root, "pkg/cassettes/m/p/t.jsonl") == Location(root, "pkg/cassettes/m/p/t.jsonl", None)


@settings(max_examples=80, deadline=None)
@given(st.lists(st.text(min_size=1, max_size=8).filter(str.isprintable), min_size=2, max_size=5, unique=True),
       st.sampled_from(["p", "a b", "a_b", "../x"]))
def test_distinct_test_ids_get_distinct_cassettes(names: list[str], slot: str) -> None:
    """Oracle: the test id is the key, so two tests never share a cassette file, whatever their names, and no
    name leads out of the cassette folder."""
    from open_agent_compiler.model.core.test_model import AgentTest
    from open_agent_compiler.testing.invokers.cassette import beside_rel

    rels = [beside_rel(Path("/nowhere"), AgentTest(name=name, prompt="p"), slot) for name in names]
    assert len(set(rels)) == len(rels)
    assert all(len(rel.split("/")) == 3 and not {"..", "."} & set(rel.split("/")) for rel in rels)
    assert beside_rel(Path("/nowhere"), AgentTest(name="t", prompt="p"), "a b") != \
        beside_rel(Path("/nowhere"), AgentTest(name="t", prompt="p"), "a_b")


def test_the_cassette_digest_is_part_of_the_key(tmp_path: Path) -> None:
    """Writing or changing a test's cassette re-runs it (`--explain` names the file); unchanged, it stays green.
    An old-location cassette is read (and said once) until one is written beside the test's definition."""
    root = tmp_path / "monitoring"
    shutil.copytree(REPO / "examples" / "monitoring", root, ignore=shutil.ignore_patterns(".oac", "__pycache__"))
    assert "passed=1" in summary(_oac(root).stdout)
    assert "skipped=1" in summary(_oac(root).stdout)
    old = root / legacy_rel("quiet-alert-quiet")
    old.parent.mkdir()
    old.write_text('{"cassette": 1}\n')
    recorded = _oac(root, "--explain")
    assert "passed=1" in summary(recorded.stdout) and "cassettes/quiet-alert-quiet.jsonl" in recorded.stdout
    assert recorded.stderr.count("read from the old location (cassettes/quiet-alert-quiet.jsonl)") == 1, \
        recorded.stderr
    assert "skipped=1" in summary(_oac(root).stdout)
    cassette = root / BESIDE
    cassette.parent.mkdir(parents=True)
    cassette.write_text('{"cassette": 1}\n')
    moved = _oac(root, "--explain")
    assert f"file {BESIDE}" in moved.stdout and "old location" not in moved.stderr, moved.stdout + moved.stderr
    assert "skipped=1" in summary(_oac(root).stdout)
    cassette.write_text('{"cassette": 1, "model": "other"}\n')
    assert f"changed: file {BESIDE}" in _oac(root, "--explain").stdout
    old.write_text('{"cassette": 1, "model": "another"}\n')  # no longer read: no reason to run
    assert "skipped=1" in summary(_oac(root).stdout)


def test_once_replays_an_existing_cassette_and_new_episodes_adds_what_does_not_match(tmp_path: Path) -> None:
    cassette = tmp_path / "c.jsonl"
    (_, chat, first), (_, messages, second) = REQUESTS[0], REQUESTS[2]
    with FakeUpstream() as fake:
        tape = tape_at(cassette, "t", "once", Upstream(base_url=fake.base_url))
        with server_with(tape) as server:
            server.begin_turn(1, "x")
            post(server, chat, first)
            tape.save()
        once = tape_at(cassette, "t", "once", None)  # exists: replay only, no provider needed
        assert once.replaying and not once.recording
        episodes = tape_at(cassette, "t", "new_episodes", Upstream(base_url=fake.base_url))
        with server_with(episodes) as server:
            server.begin_turn(1, "x")
            post(server, chat, first)  # replayed
            post(server, messages, second)  # new: forwarded
            episodes.save()
        assert len(fake.bodies) == 2
    assert [e.api for e in read_cassette(cassette)[1]] == ["chat", "messages"]


volatile_text = st.sampled_from(["/tmp/scratch-1", "http://127.0.0.1:4000", "2026-12-04", "12:30:01",
                                 "0f8fad5b-d9cb-469f-a165-70867728950e", "session_id=abc", "plain"])
noisy_values = st.recursive(st.lists(volatile_text | text_leaf, min_size=1, max_size=3).map(" ".join),
                            lambda inner: st.lists(inner, max_size=3)
                            | st.dictionaries(st.sampled_from(["system", "tools", "content", "metadata"]), inner,
                                              max_size=3), max_leaves=10)


@settings(max_examples=80, deadline=None)
@given(st.lists(noisy_values, min_size=1, max_size=6), st.lists(noisy_values, max_size=4), noisy_values,
       st.lists(st.tuples(st.integers(0, 6), st.booleans(), st.booleans()), min_size=1, max_size=6),
       st.sampled_from(["/tmp/scratch-1", "/tmp/scratch-2"]), st.randoms(use_true_random=False))
def test_a_replay_normalises_each_request_as_it_would_alone(conversation: list[Any], tools: list[Any], system: Any,
                                                            steps: list[tuple[int, bool, bool]], scratch: str,
                                                            rng: Any) -> None:
    """Oracle: a request normalised alone. Over a series of requests that resend the system prompt and the tools
    (reordered, or one changed) and a conversation that grows or is cut, the per-test memo never changes what a
    request normalises to; a new volatile set (another scratch folder) starts a new memo."""
    volatile = ((scratch, "<scratch>"),)
    memo = Memo(volatile)
    for upto, reorder, change in steps:
        offered = [{"name": f"t{i}", "about": tool} for i, tool in enumerate(tools)]
        if reorder:
            rng.shuffle(offered)
        if change and offered:
            offered[0] = {**offered[0], "about": "changed 12:30"}
        request = {"system": system, "tools": offered, "messages": conversation[:upto], "input": conversation[upto:]}
        assert normalized(request, volatile, memo) == normalized(request, volatile)
    tape = Tape(Location(root=Path("/nowhere"), rel="c.jsonl", found=None), "t", "none", None)
    tape.replaying = True  # an empty cassette: every request is a mismatch, after it was normalised
    for volatile in ((("/tmp/scratch-1", "<scratch>"),), ((scratch, "<scratch>"),)):
        tape.volatile = volatile
        with pytest.raises(InvokerError):
            tape.answer(1, "messages", "/v1/messages", {}, json.dumps({"system": system}).encode())
        assert tape._memo.volatile == volatile
        assert all(normalized(text, volatile) == done for text, done in tape._memo.strings.items())


def _sequential(value: str) -> str:
    """The matcher's replacements as first written: every pattern scanned over every string, in order."""
    from open_agent_compiler.testing.invokers import cassette as c
    value = c._UUID.sub("<uuid>", value)
    value = c._WEEKDAY_DATE.sub("<date>", value)
    value = c._DATE.sub("<date>", value)
    value = c._TIME.sub("<time>", value)
    value = c._DURATION.sub("<duration>", c._CHUNK.sub("Chunk ID: <id>", value))
    return c._STAMPS.sub(lambda m: f"{m.group(1)}=<stamp>", value)


fragments = st.sampled_from(["0f8fad5b-d9cb-469f-a165-70867728950e", "0F8FAD5B-D9CB", "-d9cb-", "Fri", "Friday",
                             " Dec", " Dec 4, 2026", "Mon Jan 05 2026", "Fri Dec 4, 2026", "Sunday Mar 1 2026", "2026-12-04", "2026/12/04", "26-12-04",
                             "-12-", "/12/", "12:30", "9:05:59", ":30", "3.25s", "0.5 ms", "1.0 seconds", ".5",
                             "Chunk ID: 9f3a", "Chunk ID:", "cch=ab12", "session_id=x", "sessionId=", "cc_version=1",
                             " ", ",", "a", "7", "=", "-", "/", ":", ".", "\n", "é"])


@settings(max_examples=400, deadline=None)
@given(st.lists(fragments, max_size=14).map("".join))
def test_skipping_a_pattern_whose_hint_is_absent_changes_nothing(text: str) -> None:
    """Oracle: the replacements as first written. A pattern is scanned only when a string holds what every match
    of it contains; the result is the same for any string (fragments of each pattern and of its hint, cut and
    joined)."""
    assert normalized(text) == _sequential(text)
