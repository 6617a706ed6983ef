"""Evidence renders values with one encoder made once (`_show.show`): the same text as
`json.dumps(value, sort_keys=True, ensure_ascii=False, default=repr)` for every value, and `repr` where that
raises (keys that cannot be sorted, a circular value), cut at the evidence limit."""

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from open_agent_compiler.testing.evaluators._show import EVIDENCE_LIMIT, show, truncate


class Odd:
    def __repr__(self) -> str:
        return "Odd()"


def reference(value: Any) -> str:
    try:
        text = json.dumps(value, sort_keys=True, ensure_ascii=False, default=repr)
    except (TypeError, ValueError):
        text = repr(value)
    return truncate(text, EVIDENCE_LIMIT)


SCALARS = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=True), st.text(),
                    st.just(Odd()), st.tuples(st.integers()))
KEYS = st.one_of(st.text(max_size=5), st.integers(-3, 3))  # mixed str/int keys cannot be sorted: repr
VALUES = st.recursive(SCALARS, lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                       st.dictionaries(KEYS, inner, max_size=4)), max_leaves=12)


@settings(max_examples=500, deadline=None)
@given(VALUES)
def test_show_is_json_dumps_with_the_same_options(value: Any) -> None:
    assert show(value) == reference(value)


def test_a_circular_value_is_shown_by_its_repr() -> None:
    loop: list[Any] = [1]
    loop.append(loop)
    assert show(loop) == reference(loop) == "[1, [...]]"
