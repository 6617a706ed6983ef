"""Text that XML 1.0 can hold, and text safe for a terminal: evidence may carry control characters (ANSI colours
and cursor movements, NULs, carriage returns) or lone surrogates, which make a JUnit file unparseable or let a
test's output rewrite the terminal. They are shown as visible escapes (`\\x1b`, `\\ud800`), never dropped."""

import re
from functools import cache


@cache
def _not_xml() -> re.Pattern[str]:
    """XML 1.0 Char: #x9 | #xA | #xD | [#x20-#xD7FF] | [#xE000-#xFFFD] | [#x10000-#x10FFFF] (compiled on first use:
    ~3 ms, which every run would pay at import)."""
    return re.compile("[^\t\n\r\u0020-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def xml_safe(text: str) -> str:
    """`text` with every character XML 1.0 cannot hold replaced by its escape."""
    return _not_xml().sub(_escape, text)


_CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")  # C0 but tab and newline, DEL, C1


def terminal_safe(text: str) -> str:
    """`text` with every control character a terminal would act on (ESC, CR, BEL, ...) replaced by its escape.
    The one filter for everything oac prints (`cli.streams` and the reporter's line writer use it)."""
    return _CONTROLS.sub(_escape, text) if _CONTROLS.search(text) else text
