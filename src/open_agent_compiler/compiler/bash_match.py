"""How each harness matches a command (or a permission name) against one rule pattern, and how it orders rules.

Measured on the pinned harness versions (see docs/compiling.md, "Permission semantics"):

- OpenCode 1.18 (`Wildcard.match`): `*` is any text (newlines and `/` included), `?` one character, everything
  else literal; a backslash counts as `/`; a pattern ending in ` *` also matches without that tail (`git *`
  matches `git`). Rules are a list: the last rule that matches decides. Its permission map is a JS object, so
  keys that are array indices ("0", "42") come first in ascending order, before every other key.
- Claude Code 2.1 (`Bash(...)` rules): `prefix:*` matches `prefix` or `prefix <anything>`; a pattern with an
  unescaped `*` is a wildcard (`*` any text, `\\*` a literal star, runs of blanks count as one space, a single
  trailing ` *` also matches without that tail); anything else must equal the command. Deny rules beat ask
  rules, ask beats allow, whatever the order.
"""

import re
from collections.abc import Callable, Iterable, Mapping
from functools import lru_cache

from open_agent_compiler.compiler.grants import Action

Matcher = Callable[[str, str], bool]  # (command, pattern) -> matches
_ARRAY_INDEX = re.compile(r"0|[1-9][0-9]*")


@lru_cache(maxsize=4096)
def _opencode_regex(pattern: str) -> re.Pattern[str]:
    escaped = re.sub(r"[.+^${}()|\[\]\\]", lambda m: "\\" + m.group(0), pattern.replace("\\", "/"))
    escaped = escaped.replace("*", ".*").replace("?", ".")
    if escaped.endswith(" .*"):
        escaped = escaped[:-3] + "( .*)?"
    return re.compile(escaped, re.DOTALL)


@lru_cache(maxsize=1024)
def _opencode_matcher(pattern: str) -> Callable[[str], bool]:
    """A matcher for one pattern (text already has `/` for `\\`): plain comparisons for the shapes rules almost
    always have (a literal name, a prefix ending in `*` or ` *`), the regex for anything else. Compiling a
    regex per distinct pattern costs ~0.1 ms, and a read-back meets thousands of distinct command prefixes.
    The hits come from one agent's rules and the prefixes every agent shares (1,000 agents: 61,499 hits of
    2,901 patterns); an entry is ~0.5 KB, so the most recent 1,024 are kept, not every pattern of a run."""
    plain = pattern.replace("\\", "/")
    head = plain[:-1]
    if "*" not in plain and "?" not in plain:
        return plain.__eq__
    if not plain.endswith("*") or "*" in head or "?" in head:
        regex = _opencode_regex(pattern)
        return lambda text: regex.fullmatch(text) is not None
    if head.endswith(" "):  # `git *` is `git` or `git <anything>`
        bare = head[:-1]
        return lambda text: text == bare or text.startswith(head)
    return lambda text: text.startswith(head)


def opencode_match(text: str, pattern: str) -> bool:
    """OpenCode's wildcard match of `text` (a command, path or permission name) against `pattern`."""
    return _opencode_matcher(pattern)(text.replace("\\", "/"))


def _blanks(text: str) -> str:
    return re.sub(r"[ \t]{2,}|\t", " ", text)


@lru_cache(maxsize=4096)
def _claude_wildcard(pattern: str) -> re.Pattern[str]:
    parts = [""]
    index = 0
    while index < len(pattern):
        ch = pattern[index]
        if ch == "\\" and index + 1 < len(pattern) and pattern[index + 1] in "*\\":
            parts[-1] += pattern[index + 1]
            index += 2
            continue
        if ch == "*":
            parts.append("")
        else:
            parts[-1] += ch
        index += 1
    pieces = [re.escape(part) for part in parts]
    if len(parts) == 2 and parts[1] == "" and parts[0].endswith(" "):
        pieces[0] = re.escape(parts[0][:-1]) + "(?: |$)"
    return re.compile(".*".join(pieces), re.DOTALL)


def _has_wildcard(pattern: str) -> bool:
    backslashes = 0
    for ch in pattern:
        if ch == "*" and backslashes % 2 == 0:
            return True
        backslashes = backslashes + 1 if ch == "\\" else 0
    return False


def claude_match(command: str, pattern: str) -> bool:
    """Claude Code's match of a bash command against the inside of one `Bash(...)` rule."""
    if pattern.endswith(":*") and len(pattern) > 2:
        prefix = _blanks(pattern[:-2])
        command = _blanks(command)
        return command == prefix or command.startswith(prefix + " ")
    if _has_wildcard(pattern):
        return _claude_wildcard(_blanks(pattern.strip())).fullmatch(_blanks(command)) is not None
    return command == pattern


# Dialects whose harness matches bash rules its own way; every other dialect uses OpenCode's syntax, which is
# also the syntax of our own patterns (Pi and Codex only state the patterns in the prompt).
BASH_MATCHERS: dict[str, Matcher] = {"claude": claude_match}


def bash_matcher(dialect: str) -> Matcher:
    return BASH_MATCHERS.get(dialect, opencode_match)


def last_match(rules: Mapping[str, Action], command: str, matcher: Matcher) -> tuple[str, Action] | None:
    """(pattern, action) of the last rule in `rules` matching `command` (a pattern also matches its own text)."""
    found = None
    for pattern, action in rules.items():
        if pattern == command or matcher(command, pattern):
            found = (pattern, action)
    return found


def js_key_order(keys: Iterable[str]) -> list[str]:
    """The order in which JavaScript (and so OpenCode) iterates an object with these keys."""
    keys = list(keys)
    indices = sorted((key for key in keys if _ARRAY_INDEX.fullmatch(key) and int(key) < 2**32 - 1), key=int)
    return indices + [key for key in keys if key not in indices] if indices else keys
