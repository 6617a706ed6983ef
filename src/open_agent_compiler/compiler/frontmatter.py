"""Markdown files with YAML frontmatter: `---` line, YAML mapping, `---` line, body.

Emitting: every string that is not a plain identifier-like word is double-quoted on one line (newlines and
control characters escaped), so no frontmatter line can ever read `---`, and YAML 1.1 and 1.2 readers (PyYAML,
js-yaml, `yaml`) agree on every value's type. Parsing is line-based: the first line must be `---` and the
frontmatter ends at the next line that is exactly `---`.
"""

import re
from functools import cache, lru_cache
from typing import Any

from open_agent_compiler.errors import OacError

_PLAIN = re.compile(r"[A-Za-z_][A-Za-z0-9_./-]*")
# Words some YAML reader turns into a bool or null when unquoted.
_SPECIAL = {"true", "false", "yes", "no", "on", "off", "y", "n", "null", "none", "nan", "inf"}


def _represent_str(dumper: Any, value: str) -> Any:
    plain = bool(_PLAIN.fullmatch(value)) and value.lower() not in _SPECIAL
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=None if plain else '"')


@cache
def _yaml() -> tuple[Any, type, type]:
    """(yaml, dumper, loader), imported on first use: a warm `oac test` neither renders nor parses YAML.

    libyaml's emitter and parser where PyYAML has them: ~10x faster, and compile runs on every `oac test`.
    The dumper quotes every non-trivial string."""
    import yaml

    dumper = type("_Dumper", (getattr(yaml, "CSafeDumper", yaml.SafeDumper),), {})
    dumper.add_representer(str, _represent_str)
    return yaml, dumper, getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def dump_yaml(config: dict[str, Any]) -> str:
    """The YAML of `config`: PyYAML's exact bytes. What a frontmatter almost always holds (nested mappings, lists
    of scalars, ASCII strings, finite numbers) is written directly, ~5x faster than PyYAML's representer; anything
    else goes to PyYAML (`tests/compiler/test_frontmatter_emit.py` holds the two to the same bytes)."""
    if config and type(config) is dict:
        lines: list[str] = []
        try:
            _block(config, "", lines)
        except _NotSimple:
            pass
        else:
            return "\n".join(lines) + "\n"
    yaml, dumper, _ = _yaml()
    return yaml.dump(
        config, Dumper=dumper, sort_keys=False, allow_unicode=True, width=2**31 - 1, default_flow_style=False
    )


class _NotSimple(Exception):
    """A value the direct writer leaves to PyYAML."""


_PRINTABLE_ASCII = re.compile(r"[ -~]*")
_LONG_KEY = 100  # YAML emitters write keys over 128 characters as complex keys (`? key`): left to PyYAML


_CACHED_LENGTH = 80  # strings up to this long are cached (bounded memory: 4,096 entries of short strings)


def _string(value: str) -> str:
    """A string scalar. Short ones are cached: the keys and actions of permission maps repeat in every agent of a
    compile (~46 scalars an agent, most of them seen before). A string that is not simple raises (not cached)."""
    return _short_string(value) if len(value) <= _CACHED_LENGTH else _string_form(value)


@lru_cache(maxsize=4096)
def _short_string(value: str) -> str:
    return _string_form(value)


def _string_form(value: str) -> str:
    if _PLAIN.fullmatch(value) and value.lower() not in _SPECIAL:
        return value
    if not _PRINTABLE_ASCII.fullmatch(value):
        raise _NotSimple
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _scalar(value: Any) -> str:
    """One scalar as `_represent_str` and PyYAML's emitter write it (ASCII strings: only `"` and `\\` escaped)."""
    kind = type(value)
    if kind is str:
        return _string(value)
    if kind is bool:
        return "true" if value else "false"
    if kind is int:
        return str(value)
    if kind is float and value - value == 0:  # finite (inf - inf and nan - nan are nan)
        text = repr(value).lower()
        return text.replace("e", ".0e", 1) if "." not in text and "e" in text else text
    if value is None:
        return "null"
    raise _NotSimple


def _block(mapping: dict[Any, Any], indent: str, lines: list[str]) -> None:
    """A block mapping: nested non-empty mappings indented by two, non-empty lists of scalars as `- item` lines at
    the key's own indentation (PyYAML's indentless sequences)."""
    for key, value in mapping.items():
        if type(key) is not str or len(key) > _LONG_KEY:
            raise _NotSimple
        head = f"{indent}{_string(key)}:"
        kind = type(value)
        if kind is str:  # most values (permission actions): straight to the cached string form
            lines.append(f"{head} {_string(value)}")
        elif kind is dict and value:
            lines.append(head)
            _block(value, indent + "  ", lines)
        elif kind is list and value:
            lines.append(head)
            lines.extend(f"{indent}- {_scalar(item)}" for item in value)
        elif kind is dict or kind is list:
            raise _NotSimple  # empty: PyYAML writes `{}` / `[]`
        else:
            lines.append(f"{head} {_scalar(value)}")


def render_markdown(config: dict[str, Any], body: str) -> bytes:
    """`---`, the YAML, `---`, a blank line, then the body (ending with one newline)."""
    text = f"---\n{dump_yaml(config)}---\n\n{body.rstrip(chr(10))}\n"
    return text.encode("utf-8")


def parse_markdown(data: bytes, where: str) -> tuple[dict[str, Any], str]:
    """(frontmatter mapping, body). A file without frontmatter is all body. Bad YAML is an OacError."""
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise OacError(f"{where}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    lines = text.split("\n")
    if lines[0].rstrip("\r") != "---":
        return {}, text
    for index in range(1, len(lines)):
        if lines[index].rstrip("\r") == "---":
            break
    else:
        raise OacError(f"{where}: frontmatter starts with '---' but has no closing '---' line")
    config = load_yaml("\n".join(lines[1:index]), where)
    if config is None:
        config = {}
    if not isinstance(config, dict):
        raise OacError(f"{where}: frontmatter must be a YAML mapping, not {type(config).__name__}")
    body = "\n".join(lines[index + 1 :])
    return config, body[1:] if body.startswith("\n") else body


def load_own_yaml(text: str) -> Any:
    """`own_yaml.load_own_yaml`, that module imported on the first read-back (its patterns take ~10 ms to compile
    at import): a warm run reads nothing back."""
    from open_agent_compiler.compiler.own_yaml import load_own_yaml as load

    return load(text)


def load_yaml(text: str, where: str) -> Any:
    """PyYAML's safe-loader value of `text`. What our own writer emits is read by `own_yaml` (exact, ~10x faster
    than PyYAML's constructor); anything else goes to PyYAML. Bad YAML is an OacError."""
    config = load_own_yaml(text)
    if config is not None:
        return config
    yaml, _, loader = _yaml()
    try:
        return yaml.load(text, Loader=loader)  # noqa: S506 - a safe loader
    except yaml.YAMLError as exc:
        problem = " ".join(str(getattr(exc, "problem", None) or exc).split())
        raise OacError(f"{where}: frontmatter is not valid YAML: {problem}") from None
