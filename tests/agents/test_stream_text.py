"""A string replaced in a model's answer wherever streaming cut it: the oracle is the same replace on each
stream's joined text (what the harness assembles), whatever the cuts, in the three APIs' streams and in plain
JSON answers; every event stays JSON and nothing else changes."""

import json
from typing import Any

from hypothesis import given, settings, strategies as st

from open_agent_compiler.testing.invokers.stream_text import plain, replaced

OLD = ["/tmp/oac-invoke-q1/project", "sk-live-KEY42", "http://127.0.0.1:4100/oac-tok"]
NEW = ["<scratch>/project", "<redacted>", "<server>"]


def _sse(events: list[tuple[str | None, Any]], compact: bool) -> str:
    """Compact: also CRLF line ends (the SSE format allows them)."""
    separators, end = ((",", ":"), "\r\n") if compact else ((", ", ": "), "\n")
    return "".join((f"event: {name}{end}" if name else "") + f"data: {json.dumps(data, separators=separators)}{end}{end}"
                   for name, data in events)


def _stream(kind: str, pieces: list[str]) -> tuple[list[tuple[str | None, Any]], Any]:
    """Events carrying `pieces` as one delta stream of `kind`, and how to read that stream back from events."""
    if kind in ("text", "partial_json"):
        delta_type = "text_delta" if kind == "text" else "input_json_delta"
        events = [("content_block_delta", {"type": "content_block_delta", "index": 0,
                                           "delta": {"type": delta_type, kind: piece}}) for piece in pieces]
        return events, lambda e: e["delta"][kind] if e.get("type") == "content_block_delta" else ""
    if kind == "chat":
        events = [(None, {"object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {"content": piece}}]})
                  for piece in pieces]
        return events, lambda e: e["choices"][0]["delta"].get("content", "") if "choices" in e else ""
    if kind == "chat_tool":
        events = [(None, {"choices": [{"index": 0, "delta": {"tool_calls": [
            {"index": 0, "function": {"arguments": piece}}]}}]}) for piece in pieces]
        return events, lambda e: e["choices"][0]["delta"]["tool_calls"][0]["function"]["arguments"] \
            if "choices" in e else ""
    events = [("response.output_text.delta", {"type": "response.output_text.delta", "item_id": "m1",
                                              "output_index": 0, "content_index": 0, "delta": piece})
              for piece in pieces]
    return events, lambda e: e["delta"] if e.get("type") == "response.output_text.delta" else ""


words = st.sampled_from(["all quiet", " ", "in ", "/", "oac-", "tmp", *OLD, *[old[:5] for old in OLD],
                         *[old[-4:] for old in OLD]])


@settings(max_examples=300, deadline=None)
@given(st.lists(words, max_size=12).map("".join), st.lists(st.integers(0, 60), max_size=10),
       st.sampled_from(["text", "partial_json", "chat", "chat_tool", "responses"]), st.booleans(),
       st.lists(st.integers(0, 2), min_size=1, max_size=3, unique=True))
def test_a_replace_sees_through_any_cut_of_a_stream(text: str, cuts: list[int], kind: str, compact: bool,
                                                    chosen: list[int]) -> None:
    bounds = sorted({0, len(text), *(cut for cut in cuts if cut < len(text))})
    pieces = [text[a:b] for a, b in zip(bounds, bounds[1:])] or [""]
    events, read = _stream(kind, pieces)
    framed = [("message_start", {"type": "message_start", "note": OLD[0]}), *events, (None, {"type": "done"})]
    pairs = [(OLD[i], NEW[i]) for i in chosen]
    out = replaced(_sse(framed, compact), pairs)

    parsed = [json.loads(line[len("data:"):]) for line in out.split("\n") if line.startswith("data:")]
    assert out.count("\r\n") == (out.count("\n") if compact else 0)  # line ends as sent
    expected = text
    for old, new in pairs:
        expected = expected.replace(old, new)
    assert "".join(read(event) for event in parsed) == expected  # what the harness assembles
    assert len(parsed) == len(framed)  # no event added or lost
    assert parsed[0]["note"] == (NEW[0] if 0 in chosen else OLD[0]) and parsed[-1] == {"type": "done"}
    for i in chosen:
        assert OLD[i] not in out


@given(st.lists(words, max_size=8).map("".join))
def test_a_plain_answer_is_replaced_as_text(text: str) -> None:
    body = json.dumps({"content": [{"type": "text", "text": text}], "id": "msg_1"})
    out = json.loads(replaced(body, [(OLD[1], NEW[1])]))
    assert out == {"content": [{"type": "text", "text": text.replace(OLD[1], NEW[1])}], "id": "msg_1"}


def test_a_string_json_would_escape_is_not_plain() -> None:
    assert plain("/tmp/oac-invoke-x_1/project") and plain("http://127.0.0.1:80/oac-a-b_c")
    assert not any(plain(text) for text in ('/tmp/a"b', "/tmp/a\\b", "/tmp/é", "/tmp/a\nb"))
