"""An exact reader for the YAML subset our frontmatter writer emits (`frontmatter.dump_yaml`'s direct path).

`load_own_yaml(text)` returns what PyYAML's safe loader returns for `text`, or None ("not mine": the caller asks
PyYAML). It accepts only:

- lines `KEY: SCALAR` and `KEY:` (no blank lines but one final newline, no tabs, no `\\r`, no comments, no trailing spaces);
- after `KEY:` at indent I either a nested mapping at indent I+2 or `- SCALAR` lines at indent I (PyYAML's
  indentless sequence); an empty `KEY:` (null) is left to PyYAML;
- KEY: a plain word `[A-Za-z_][A-Za-z0-9_./-]*` that no YAML reader reads as bool/null, or a double-quoted
  string of at most 100 characters;
- SCALAR: such a plain word (str), a double-quoted string whose only escapes are `\\\\` and `\\"` (str),
  `true`/`false`/`null`, an int as `str(int)` writes it, a float as the writer writes it (`1.5`, `1.0e+16`).

Anything else — anchors, tags, flow collections, other escapes, multi-line scalars, duplicate keys, `yes`/`on`,
octal or `1e3` numbers — is not mine. `tests/compiler/test_own_yaml.py` holds this to PyYAML: on everything the
writer emits it returns PyYAML's value (same types, same key order), on arbitrary text PyYAML's value or None.
"""

import re
from functools import lru_cache
from typing import Any

_WORD = r"[A-Za-z_][A-Za-z0-9_./-]*"
# Characters a double-quoted scalar may hold unescaped: printable ASCII but `"` and `\`, and printable non-ASCII
# except the YAML line breaks (U+0085, U+2028, U+2029) and the BOM (U+FEFF).
_QUOTED = r'"(?:[ !#-\[\]-~\xa0-\u2027\u202a-\ud7ff\ue000-\ufefe\uff00-\ufffd\U00010000-\U0010ffff]|\\[\\"])*"'
_NUMBER = r"-?(?:0|[1-9][0-9]{0,999})(?:\.[0-9]+(?:e[-+][0-9]+)?)?"
_SCALAR = f"{_WORD}|{_QUOTED}|{_NUMBER}"
_KEY_LINE = re.compile(f"( *)({_WORD}|{_QUOTED}):(?: ({_SCALAR}))?")
_ITEM_LINE = re.compile(f"( *)- ({_SCALAR})")
_ESCAPE = re.compile(r"\\([\\\"])")
# Plain words some YAML reader turns into a bool or null: the writer quotes them, so a plain one is not mine.
_SPECIAL = {"true", "false", "yes", "no", "on", "off", "y", "n", "null", "none", "nan", "inf"}
_CONSTANTS: dict[str, Any] = {"true": True, "false": False, "null": None}
_LONG_KEY = 100
_MAX_DEPTH = 64


class _NotMine(Exception):
    """The text leaves the subset."""


@lru_cache(maxsize=1024)  # tokens repeat across agents (permission keys and actions); values are immutable
def _string(token: str) -> str:
    if token[0] == '"':
        inner = token[1:-1]
        return _ESCAPE.sub(r"\1", inner) if "\\" in inner else inner
    if token.lower() in _SPECIAL:
        raise _NotMine
    return token


@lru_cache(maxsize=4096)
def _scalar(token: str) -> Any:
    first = token[0]
    if first == '"':
        return _string(token)
    if first == "-" or "0" <= first <= "9":
        return float(token) if "." in token else int(token)
    if token in _CONSTANTS:
        return _CONSTANTS[token]
    return _string(token)


def load_own_yaml(text: str) -> dict[str, Any] | None:
    """PyYAML's value of `text` if `text` lies in the writer's subset, else None."""
    try:
        return _load(text)
    except _NotMine:
        return None


def _load(text: str) -> dict[str, Any]:
    if "\r" in text or "\t" in text:
        raise _NotMine
    lines = text.split("\n")
    if len(lines) > 1 and lines[-1] == "":  # `dump_yaml`'s final newline
        lines.pop()
    root: dict[str, Any] = {}
    indents = [0]
    mappings = [root]
    pending: tuple[int, str, dict[str, Any]] | None = None  # the last `KEY:` line without a value
    index, count = 0, len(lines)
    while index < count:
        line = lines[index]
        if pending is not None:
            depth, key, parent = pending
            pending = None
            item = _ITEM_LINE.fullmatch(line)
            if item is not None and len(item.group(1)) == depth:
                items = []
                while item is not None and len(item.group(1)) == depth:
                    items.append(_scalar(item.group(2)))
                    index += 1
                    item = _ITEM_LINE.fullmatch(lines[index]) if index < count else None
                parent[key] = items
                continue
            if len(line) - len(line.lstrip(" ")) != depth + 2 or len(indents) >= _MAX_DEPTH:
                raise _NotMine
            child: dict[str, Any] = {}
            parent[key] = child
            indents.append(depth + 2)
            mappings.append(child)
        match = _KEY_LINE.fullmatch(line)
        if match is None:
            raise _NotMine
        spaces, token, value = match.groups()
        depth = len(spaces)
        while depth < indents[-1]:
            indents.pop()
            mappings.pop()
        if depth != indents[-1]:
            raise _NotMine
        if len(token) > _LONG_KEY:
            raise _NotMine
        key = _string(token)
        mapping = mappings[-1]
        if key in mapping:
            raise _NotMine
        if value is None:
            mapping[key] = None  # placeholder keeps the key's position; replaced by the block below
            pending = (depth, key, mapping)
        else:
            mapping[key] = _scalar(value)
        index += 1
    if pending is not None:
        raise _NotMine
    return root
