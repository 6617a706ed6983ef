"""A row the backend commits is encoded by one encoder made once (`backend.summarise`): the same text as
`json.dumps(value, default=str)`, non-JSON values (a Path, a set, an object) written as their str()."""

import json
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from open_agent_compiler.tasks.backend import VALUES, summarise

LEAVES = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), st.text(),
                   st.builds(Path, st.text(min_size=1, max_size=5)), st.frozensets(st.integers(), max_size=2))
VALUES_ = st.recursive(LEAVES, lambda inner: st.one_of(st.lists(inner, max_size=3),
                                                       st.dictionaries(st.text(max_size=4), inner, max_size=3)),
                       max_leaves=10)


@settings(max_examples=300, deadline=None)
@given(parts=st.dictionaries(st.text(max_size=6), VALUES_, max_size=4), extra=VALUES_)
def test_a_row_is_encoded_as_json_dumps_with_default_str(parts: dict[str, Any], extra: Any) -> None:
    values = {"key": "k", "status": "pass", "at": "t", "parts": parts, "extra": extra}
    row = {VALUES: values, "checker:": "OacFileChecker", "deps:": ("a", "b")}
    _, parts_json, row_json = summarise(row)
    assert parts_json == json.dumps(parts, default=str)
    without = {**row, VALUES: {k: v for k, v in values.items() if k != "parts"}}
    assert row_json == json.dumps(without, default=str)
