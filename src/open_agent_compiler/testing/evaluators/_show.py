"""Short, human-readable renderings of values for evaluator evidence, and the text that text checks search."""

import json
from typing import Any

EVIDENCE_LIMIT = 200
# The skip reason of text checks with no output; 1.16.5 searches str(None) instead (a deliberate difference).
NO_TARGET = "no target to search (1.16.5 would search the text 'None')"


def truncate(text: str, limit: int = EVIDENCE_LIMIT) -> str:
    """`text` cut to `limit` characters, saying how much was dropped."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… (+{len(text) - limit} chars)"


# What `json.dumps(value, sort_keys=True, ensure_ascii=False, default=repr)` builds for each call (an encoder
# keeps no state between `encode` calls): made once, as evidence renders two values per evaluator.
_SHOW = json.JSONEncoder(sort_keys=True, ensure_ascii=False, default=repr)


def show(value: Any, limit: int = EVIDENCE_LIMIT) -> str:
    """A one-line JSON-ish rendering (strings keep their quotes, so "1" and 1 read differently)."""
    try:
        text = _SHOW.encode(value)
    except (TypeError, ValueError):  # e.g. mixed-type dict keys cannot be sorted
        text = repr(value)
    return truncate(text, limit)


def search_text(target: Any) -> str:
    """What substring/regex/fact checks search: a string as is, anything else as sorted-key JSON.

    `ensure_ascii=False` keeps non-ASCII characters literal so a needle like "café" can match a dict value.
    """
    if isinstance(target, str):
        return target
    try:
        return json.dumps(target, sort_keys=True, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        return str(target)


def excerpt(text: str, start: int, end: int, margin: int = 60) -> str:
    """The match `text[start:end]` with up to `margin` characters either side, marked with … when cut."""
    start = max(0, min(start, len(text)))
    end = max(start, min(end, len(text)))
    left = max(0, start - margin)
    right = min(len(text), end + margin)
    prefix = "…" if left > 0 else ""
    suffix = "…" if right < len(text) else ""
    return truncate(f"{prefix}{text[left:right]}{suffix}")
