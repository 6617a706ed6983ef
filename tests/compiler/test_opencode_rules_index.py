"""The OpenCode read-back indexes an agent's rules (issue 18): which rules apply to a permission must be exactly
the rules whose key OpenCode's wildcard match accepts, in the order OpenCode evaluates them."""

from hypothesis import given, settings
from hypothesis import strategies as st

from open_agent_compiler.compiler.bash_match import opencode_match
from open_agent_compiler.compiler.opencode import _Rules

NAMES = st.sampled_from(["read", "edit", "bash", "task", "a/b", "a\\b", "notes_x", "notes_y", "*", "notes_*",
                         "re?d", "a*", "other"])
ACTIONS = st.sampled_from(["allow", "ask", "deny"])
RULES = st.lists(st.tuples(NAMES, st.sampled_from(["*", "git *", "x"]), ACTIONS), max_size=12)


@settings(max_examples=300, deadline=None)
@given(rules=RULES, permission=NAMES)
def test_the_index_finds_exactly_the_matching_rules_in_order(rules: list, permission: str) -> None:
    rules = [("*", "*", "ask"), *rules]
    expected = [(pattern, action) for key, pattern, action in rules if opencode_match(permission, key)]
    indexed = _Rules(rules)
    assert indexed.applicable(permission) == expected
    assert indexed.applicable(permission) == expected  # and from its memo


def test_a_catch_all_after_a_named_key_comes_after_it() -> None:
    rules = [("*", "*", "ask"), ("read", "*", "allow"), ("*", "*", "deny")]
    assert _Rules(rules).applicable("read") == [("*", "ask"), ("*", "allow"), ("*", "deny")]
