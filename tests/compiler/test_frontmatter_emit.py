"""The frontmatter's YAML is PyYAML's, byte for byte, whether the direct writer or PyYAML wrote it (issue 18)."""

import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from open_agent_compiler.compiler.frontmatter import _yaml, dump_yaml, parse_markdown, render_markdown


def pyyaml(config: dict) -> str:
    _, dumper, _ = _yaml()
    return yaml.dump(config, Dumper=dumper, sort_keys=False, allow_unicode=True, width=2**31 - 1,
                     default_flow_style=False)


WORDS = st.sampled_from(["*", "read", "bash", "git status *", "yes", "No", "null", "~", "on", "1.5", "0x1F", "-x",
                         "a: b", "# c", "'q'", '"dq"', "back\\slash", "", " lead", "trail ", "é", "line\nbreak",
                         "tab\t", "provider/model-x", "_under", "x" * 130, "\x00", "\u2028", "true", "e5", ".inf"])
TEXT = st.one_of(WORDS, st.text(max_size=12), st.text(alphabet=st.characters(min_codepoint=32, max_codepoint=126),
                                                     max_size=40))
SCALARS = st.one_of(TEXT, st.booleans(), st.integers(), st.floats(), st.none())
VALUES = st.recursive(SCALARS, lambda inner: st.one_of(st.lists(SCALARS, max_size=3),
                                                       st.dictionaries(TEXT, inner, max_size=4)), max_leaves=12)
CONFIGS = st.dictionaries(TEXT, VALUES, max_size=6)


@settings(max_examples=600, deadline=None)
@given(config=CONFIGS)
def test_the_direct_writer_gives_pyyamls_bytes(config: dict) -> None:
    assert dump_yaml(config) == pyyaml(config)


def test_a_typical_frontmatter_is_written_directly_and_reads_back() -> None:
    config = {"description": "Reviews: code #1", "mode": "subagent", "model": "provider/model-x",
              "temperature": 0.2, "tools": ["Read", "Bash(git status:*)"], "n": 3, "on": True, "off": None,
              "permission": {"*": "deny", "bash": {"*": "deny", "git status *": "allow"}, "read": "allow"}}
    assert dump_yaml(config) == pyyaml(config)
    assert parse_markdown(render_markdown(config, "Body."), "x.md") == (config, "Body.\n")


def test_long_keys_and_values_are_written_as_pyyaml_writes_them() -> None:
    """Emitters write a key over 128 characters as a complex key (`? key`); values have no width limit here."""
    for length in range(90, 140):
        for text in ("x" * length, "a b" + "x" * (length - 3)):
            config = {text: text, "nested": {text: [text]}}
            assert dump_yaml(config) == pyyaml(config), length
