"""The frontmatter read-back's own YAML reader is exact: PyYAML's value or "not mine", never anything else (issue 18)."""

import math
from typing import Any

import pytest
import yaml
from hypothesis import example, given, settings
from hypothesis import strategies as st

from oac_builders import DIALECT_NAMES
from test_examples import EXAMPLE, load_module

from open_agent_compiler.compiler import frontmatter
from open_agent_compiler.compiler.dialects import DIALECTS
from open_agent_compiler.compiler.frontmatter import _yaml, dump_yaml
from open_agent_compiler.compiler.own_yaml import load_own_yaml
from open_agent_compiler.model.registry import ResolvedConfig


def pyyaml_load(text: str) -> Any:
    _, _, loader = _yaml()
    return yaml.load(text, Loader=loader)  # noqa: S506 - a safe loader


def same(left: Any, right: Any) -> bool:
    """Equal with identical types all the way down (True != 1, 1 != 1.0, key order counts, -0.0 != 0.0)."""
    if type(left) is not type(right):
        return False
    if type(left) is dict:
        return list(left) == list(right) and all(
            same(a, b) for (a, b) in zip(left.items(), right.items(), strict=True))
    if type(left) in (list, tuple):
        return len(left) == len(right) and all(same(a, b) for a, b in zip(left, right, strict=True))
    if type(left) is float:
        return (math.isnan(left) and math.isnan(right)) or (left == right and math.copysign(1, left) ==
                                                            math.copysign(1, right))
    return left == right


LOOKALIKES = ["yes", "No", "ON", "off", "y", "n", "true", "False", "null", "Null", "~", "none", "1e3", "1.0e+3",
              "0x1F", "017", "0o17", "0b11", "1_000", "-0", "+1", ".5", "1.", ".inf", "-.inf", ".nan", "2024-01-01",
              "2001-12-14t21:59:43.10-05:00", "1:20", "12:30:45", "<<", "=", "", " ", "a: b", "# c", "a #b", "'q'",
              '"dq"', "back\\slash", "x\\n", "é", "日本", "\u00a0", "\u2028", "\x85", "\ufeff", "line\nbreak",
              "tab\t", "provider/model-x", "_under", "-x", "- x", "? k", "&a", "*a", "!t", "%x", "@x", "`x", "|",
              ">", "[a]", "{a: 1}", "x" * 101, "a" * 99, "git status *", "Bash(git status:*)"]
TEXT = st.one_of(st.sampled_from(LOOKALIKES), st.text(max_size=12),
                 st.text(alphabet=st.characters(min_codepoint=32, max_codepoint=126), max_size=40))
SCALARS = st.one_of(TEXT, st.booleans(), st.integers(), st.integers(min_value=-(2**70), max_value=2**70),
                    st.floats(), st.none())
VALUES = st.recursive(SCALARS, lambda inner: st.one_of(st.lists(SCALARS, max_size=4),
                                                       st.dictionaries(TEXT, inner, max_size=4)), max_leaves=16)
CONFIGS = st.dictionaries(TEXT, VALUES, max_size=6)


# What frontmatters hold: ASCII strings (lookalikes included), finite numbers, non-empty nested collections.
ASCII = st.one_of(st.sampled_from([w for w in LOOKALIKES if w.isascii() and w.isprintable()]),
                  st.text(alphabet=st.characters(min_codepoint=32, max_codepoint=126), max_size=30))
ASCII_SCALARS = st.one_of(ASCII, st.booleans(), st.integers(), st.floats(allow_nan=False, allow_infinity=False),
                          st.none())
ASCII_VALUES = st.recursive(ASCII_SCALARS, lambda inner: st.one_of(
    st.lists(ASCII_SCALARS, min_size=1, max_size=4), st.dictionaries(ASCII, inner, min_size=1, max_size=4)),
    max_leaves=16)
ASCII_CONFIGS = st.dictionaries(ASCII, ASCII_VALUES, min_size=1, max_size=6)


@settings(max_examples=800, deadline=None)
@given(config=st.one_of(CONFIGS, ASCII_CONFIGS))
def test_what_the_writer_emits_reads_back_as_pyyaml_reads_it(config: dict) -> None:
    text = dump_yaml(config)
    mine = load_own_yaml(text)
    if mine is not None:
        assert same(mine, pyyaml_load(text))


def test_the_writers_plain_subset_is_read_without_pyyaml() -> None:
    """Not a vacuous property: typical frontmatters (ASCII, finite numbers, lookalike strings) are all mine."""
    configs = [
        {"description": "Reviews: code #1", "mode": "subagent", "model": "provider/model-x", "temperature": 0.2,
         "tools": ["Read", "Bash(git status:*)", 3, -1.5e-07, True, None], "n": 3, "on": True, "off": None,
         "permission": {"*": "deny", "bash": {"*": "deny", "git status *": "allow"}, "read": "allow"}},
        {word: word for word in LOOKALIKES if word.isascii() and word.isprintable() and len(word) <= 100},
        {"nums": [0, -0.0, 1e16, 1.5e300, 123456789012345678901234567890, -7, 0.1], "deep": {"a": {"b": {"c": [1]}}},
         "after": "x"},
    ]
    for config in configs:
        text = dump_yaml(config)
        mine = load_own_yaml(text)
        assert mine is not None, text
        assert same(mine, pyyaml_load(text)), text
        assert same(mine, config)


FRAGMENTS = ["a", "b", "_x", "a.b/c-d", "yes", "on", "y", "True", "NULL", "null", "true", "false", "~", "0", "-0",
             "1", "-12", "017", "0x10", "1e3", "1.0e+3", "1.0e3", "1.5", "-0.0", ".5", "1.", "1_0", "+1", '"q"',
             '"a\\"b"', '"a\\\\b"', '"a\\nb"', '"\\x41"', '"é"', "'s'", '"a', '""', "&x", "*x", "!!str", "[1]",
             "{}", "|", ">", "#c", " #c", ":", ": ", " ", "  ", "- ", "-", "\t", "\r", "\n", "\n  ", "\n- ",
             "\n  - ", "\n    ", "\u2028", "\x85", "\ufeff", "\x00", "---", "...", "%YAML 1.1", "? ", "<<"]


GOOD_KEYS = ["a", "b", "c", "d", "e", '"f"', '"k: v"', '"*"', "x.y", "_z", '"yes"', '"1"']
GOOD_VALUES = ["v", "1", "-2", "0", "-0.0", "1.5", "1.0e+16", "1.5e-07", "true", "false", "null", '"q"', '"a\\"b"',
               '"a\\\\b"', '""', '"on"', '"1e3"', "x/y-z"]
KEYS = st.one_of(st.sampled_from(GOOD_KEYS), st.sampled_from(GOOD_KEYS), st.sampled_from(FRAGMENTS))
VALUES_TEXT = st.one_of(st.sampled_from(GOOD_VALUES), st.sampled_from(GOOD_VALUES), st.sampled_from(FRAGMENTS))
LINES = st.one_of(
    st.tuples(st.sampled_from(["", "", "  ", "  ", "    ", " "]), KEYS,
              st.one_of(st.just(":"), st.tuples(st.just(": "), VALUES_TEXT).map("".join),
                        st.sampled_from([": ", ":  ", ": v ", ":\t1"]))).map("".join),
    st.tuples(st.sampled_from(["", "", "  ", " "]), st.sampled_from(["- ", "- ", "-", "-  "]), VALUES_TEXT
              ).map("".join))
# Near misses of the subset: lines shaped like the writer's, with any fragment as key, value or indentation.
NEAR = st.lists(LINES, min_size=1, max_size=5).map("\n".join)


@settings(max_examples=1500, deadline=None)
@given(text=st.one_of(st.lists(st.sampled_from(FRAGMENTS), max_size=24).map("".join), st.text(max_size=60),
                      CONFIGS.map(dump_yaml), ASCII_CONFIGS.map(dump_yaml), NEAR))
@example("a:\n- 1\nb: 2")
@example("a:\n  - 1")
@example("a: 1\na: 2")
@example("a:\nb: 1")
@example("a: foo\n  bar")
@example("a: 1e3")
@example("a: yes")
@example("a: 0x10")
@example("a: 017\nb:\n- 08")
@example('a: "x\\ny"')
@example('"k\\tx": 1')
@example('a:\n- "\\x41"\n- "\\/"\n- "\\u00e9"')
@example("true: 1")
@example('"a":\n  "b": "c\\"d"\n  e:\n  - f\n  g: -0.0')
def test_for_any_text_the_reader_gives_pyyamls_value_or_declines(text: str) -> None:
    mine = load_own_yaml(text)  # never raises
    if mine is None:
        return
    assert same(mine, pyyaml_load(text)), text


def test_the_read_back_uses_the_reader_and_falls_back_to_pyyaml(monkeypatch) -> None:
    calls: list[str] = []
    real = frontmatter._yaml

    def counting() -> Any:
        calls.append("pyyaml")
        return real()

    monkeypatch.setattr(frontmatter, "_yaml", counting)
    assert frontmatter.load_yaml("a: 1\nb:\n- x", "f.md") == {"a": 1, "b": ["x"]}
    assert calls == []
    assert frontmatter.load_yaml("a: yes\nb: [x]", "f.md") == {"a": True, "b": ["x"]}
    assert calls == ["pyyaml"]


def frontmatters(files: dict[str, bytes]) -> dict[str, str]:
    """The frontmatter text of every compiled Markdown file, as parse_markdown hands it to the reader."""
    found = {}
    for path, data in files.items():
        lines = data.decode("utf-8").split("\n")
        if path.endswith(".md") and lines[0] == "---" and "---" in lines[1:]:
            found[path] = "\n".join(lines[1:lines.index("---", 1)])
    return found


@pytest.mark.parametrize("dialect", DIALECT_NAMES)
def test_compiled_agents_are_read_by_the_reader_as_pyyaml_reads_them(dialect: str, team: ResolvedConfig) -> None:
    """The example project and the shared test team, compiled for every dialect: every frontmatter the direct writer
    wrote is read without PyYAML, and the read-back (capabilities included) is the same with and without the reader."""
    example = load_module("own_yaml_example_agents", EXAMPLE / "agents.py").registry().resolve_config("prod")
    for resolved, root in ((example, EXAMPLE), (team, None)):
        files = DIALECTS[dialect].compile(resolved, source_root=root).file_map()
        texts = frontmatters(dict(files))
        assert texts or dialect == "codex"
        for path, text in texts.items():
            mine, value = load_own_yaml(text), pyyaml_load(text)
            if mine is None:  # only what the direct writer leaves to PyYAML (e.g. Claude's list of MCP mappings)
                with pytest.raises(frontmatter._NotSimple):
                    frontmatter._block(value, "", [])
            else:
                assert same(mine, value), path
        fast = {agent.compiled_name: DIALECTS[dialect].capabilities(agent.compiled_name, files)
                for agent in resolved.agents}
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(frontmatter, "load_own_yaml", lambda text: None)
            slow = {agent.compiled_name: DIALECTS[dialect].capabilities(agent.compiled_name, files)
                    for agent in resolved.agents}
        assert fast == slow


def quoted(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


@settings(max_examples=600, deadline=None)
@given(pairs=st.lists(st.tuples(st.text(max_size=8), st.text(max_size=12)), min_size=1, max_size=4))
def test_quoted_text_of_any_characters_reads_as_pyyaml_reads_it(pairs: list) -> None:
    """Double-quoted scalars with any characters (non-ASCII, line separators, BOM, controls) and only the two
    escapes the reader knows: PyYAML's string or declined."""
    text = "\n".join(f"{quoted(key)}: {quoted(value)}" for key, value in pairs)
    mine = load_own_yaml(text)
    if mine is not None:
        assert same(mine, pyyaml_load(text)), text
