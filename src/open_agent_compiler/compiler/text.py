"""Text helpers for compiled prompts: one line ending everywhere, user prose quoted or indented so that it never
starts a line the way our own structure does."""

import re
from collections.abc import Iterable

_NEWLINES = re.compile(r"\r\n?")


def lf(text: str) -> str:
    """User text with CRLF and lone CR as LF: one line ending in every dialect (TOML multi-line strings, used
    for codex, cannot keep CR), and no CR that a harness might break a line at."""
    return _NEWLINES.sub("\n", text) if "\r" in text else text  # almost all text has no CR: no regex pass


def quote(text: str) -> list[str]:
    """User prose as a blockquote."""
    text = lf(text)
    return [f"> {line}" if line else ">" for line in text.strip("\n").split("\n")] if text.strip() else []


def item(text: str, bullet: str = "- ") -> list[str]:
    """One list item; continuation lines indented so they never start at column 0."""
    first, *rest = lf(text).strip("\n").split("\n")
    return [bullet + first, *("  " + line for line in rest)]


def items(label: str, texts: Iterable[str]) -> list[str]:
    lines = [line for text in texts if text.strip() for line in item(text)]
    return [label, *lines, ""] if lines else []


def code_block(text: str) -> list[str]:
    return ["    " + line if line else "" for line in text.split("\n")] + [""]


def paragraphs(*parts: str) -> str:
    return "\n\n".join(lf(part).strip("\n") for part in parts if part.strip())
