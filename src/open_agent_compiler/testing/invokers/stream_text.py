"""Strings replaced in a model's answer even where streaming cut them: a streamed answer splits its text and tool
arguments into deltas at arbitrary places, so a string to replace (a key to scrub, the scratch folder to label)
can straddle two events. `replaced` first moves each occurrence whole into the delta where it starts (the joined
text of every delta stream stays the same: only where it is cut changes), then replaces it everywhere."""

import json
from collections.abc import Iterator, Sequence
from typing import Any

Pairs = Sequence[tuple[str, str]]
Piece = tuple[int, Any, str]  # (the event it is in, the dict holding it, its key there)

# Anthropic Messages: content_block_delta's delta fields; OpenAI chat: a chunk's delta fields
_MESSAGES_DELTAS = ("text", "partial_json", "thinking")
_CHAT_DELTAS = ("content", "reasoning_content", "reasoning")


def plain(text: str) -> bool:
    """`text` reads the same inside a JSON string at any depth (no character JSON escapes), so a raw replace of
    it in JSON text is exact."""
    return all(" " <= char <= "~" and char not in '"\\' for char in text)


def replaced(body: str, pairs: Pairs) -> str:
    """`body` (a JSON answer, a stream of server-sent events, or any text) with each `old` of `pairs` replaced by
    its `new`, in order, including occurrences a stream split across deltas."""
    pairs = [(old, new) for old, new in pairs if old and old != new]
    if not pairs:
        return body
    if body.lstrip().startswith(("data:", "event:", ":")) or "\ndata:" in body:
        return _raw(_events(body, pairs), pairs)
    try:
        answer = json.loads(body)
    except ValueError:
        return _raw(body, pairs)
    return json.dumps(_leaves(answer, pairs), ensure_ascii=False) if _has(answer, pairs) else _raw(body, pairs)


def _raw(text: str, pairs: Pairs) -> str:
    for old, new in pairs:
        text = text.replace(old, new)
    return text


def _events(body: str, pairs: Pairs) -> str:
    lines = body.split("\n")
    events: list[tuple[int, str, Any]] = []  # (line index, "data:" prefix as sent, the parsed event)
    for index, line in enumerate(lines):
        if line.startswith("data:"):
            prefix = "data: " if line.startswith("data: ") else "data:"
            try:
                events.append((index, prefix, json.loads(line[len(prefix):])))
            except ValueError:
                continue
    streams: dict[Any, list[Piece]] = {}
    for number, (_, _, event) in enumerate(events):
        for stream, holder, key in _pieces(event):
            streams.setdefault(stream, []).append((number, holder, key))
    changed: set[int] = set()
    for pieces in streams.values():
        changed |= _recut(pieces, [old for old, _ in pairs])
    for number, (index, prefix, event) in enumerate(events):
        if number in changed or _has(event, pairs):
            end = "\r" if lines[index].endswith("\r") else ""  # a stream sent with CRLF keeps its line ends
            lines[index] = prefix + json.dumps(_leaves(event, pairs), ensure_ascii=False) + end
    return "\n".join(lines)


def _pieces(event: Any) -> Iterator[tuple[Any, Any, str]]:
    """The delta strings of one streamed event: (the stream it continues, the dict holding it, its key there)."""
    if not isinstance(event, dict):
        return
    kind = event.get("type")
    if kind == "content_block_delta" and isinstance(event.get("delta"), dict):
        for key in _MESSAGES_DELTAS:
            if isinstance(event["delta"].get(key), str):
                yield ("messages", event.get("index"), key), event["delta"], key
    elif isinstance(kind, str) and kind.endswith(".delta") and isinstance(event.get("delta"), str):
        yield ("responses", kind, event.get("item_id"), event.get("output_index"),
               event.get("content_index")), event, "delta"
    for choice in event.get("choices") or [] if isinstance(event.get("choices"), list) else []:
        delta = choice.get("delta") if isinstance(choice, dict) else None
        if not isinstance(delta, dict):
            continue
        for key in _CHAT_DELTAS:
            if isinstance(delta.get(key), str):
                yield ("chat", choice.get("index"), key), delta, key
        for call in delta.get("tool_calls") or [] if isinstance(delta.get("tool_calls"), list) else []:
            function = call.get("function") if isinstance(call, dict) else None
            if isinstance(function, dict) and isinstance(function.get("arguments"), str):
                yield ("chat", choice.get("index"), "tool", call.get("index")), function, "arguments"


def _recut(pieces: list[Piece], targets: list[str]) -> set[int]:
    """Move the cuts between consecutive pieces of one stream out of every occurrence of a target (to its end),
    until none is inside one; the events whose piece changed."""
    texts = [holder[key] for _, holder, key in pieces]
    joined = "".join(texts)
    cuts, at = [], 0
    for text in texts[:-1]:
        at += len(text)
        cuts.append(at)
    spans = [(start, start + len(target)) for target in targets
             for start in _occurrences(joined, target)]
    moved = True
    while moved:
        moved = False
        for start, end in spans:
            for index, cut in enumerate(cuts):
                if start < cut < end:
                    cuts[index], moved = end, True
        cuts = [max(cuts[:index + 1]) for index in range(len(cuts))]  # never decreasing
    bounds = [0, *cuts, len(joined)]
    changed: set[int] = set()
    for index, (event, holder, key) in enumerate(pieces):
        text = joined[bounds[index]:bounds[index + 1]]
        if text != holder[key]:
            holder[key] = text
            changed.add(event)
    return changed


def _occurrences(text: str, target: str) -> Iterator[int]:
    start = text.find(target)
    while start >= 0:
        yield start
        start = text.find(target, start + 1)


def _has(value: Any, pairs: Pairs) -> bool:
    if isinstance(value, str):
        return any(old in value for old, _ in pairs)
    if isinstance(value, dict):
        return any(_has(item, pairs) for item in value.values())
    if isinstance(value, list):
        return any(_has(item, pairs) for item in value)
    return False


def _leaves(value: Any, pairs: Pairs) -> Any:
    if isinstance(value, str):
        return _raw(value, pairs)
    if isinstance(value, dict):
        return {key: _leaves(item, pairs) for key, item in value.items()}
    if isinstance(value, list):
        return [_leaves(item, pairs) for item in value]
    return value
