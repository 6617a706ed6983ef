"""Text that XML 1.0 can hold: evidence may carry control characters (ANSI colours, NULs) or lone surrogates,
which make a JUnit file unparseable. They are shown as visible escapes (`\\x1b`, `\\ud800`), never dropped."""

import re

# XML 1.0 Char: #x9 | #xA | #xD | [#x20-#xD7FF] | [#xE000-#xFFFD] | [#x10000-#x10FFFF]
_NOT_XML = re.compile("[^\t\n\r\u0020-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def xml_safe(text: str) -> str:
    """`text` with every character XML 1.0 cannot hold replaced by its escape."""
    return _NOT_XML.sub(_escape, text)
