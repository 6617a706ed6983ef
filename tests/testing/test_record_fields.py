"""`TestRecord.of_fields` builds what pydantic's `model_construct` builds from the same fields: the same record,
the same JSON line, the same fields set (issue 18: half of a record's cost in a cold run). If a pydantic upgrade
changes what `model_construct` sets, these fail."""

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from open_agent_compiler.history.log import TestRecord

_text = st.text(max_size=20)
_maybe = st.none() | _text
_json = st.recursive(st.none() | st.booleans() | st.integers(-10**6, 10**6) | _text
                     | st.floats(allow_nan=False, allow_infinity=False),
                     lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_text, inner, max_size=3),
                     max_leaves=8)


@st.composite
def fields(draw: Any) -> dict[str, Any]:
    status = draw(st.sampled_from(["pass", "fail", "skipped", "not_runnable"]))
    return {
        "timestamp": draw(_text), "run_id": draw(_text), "test_id": draw(_text),
        "test_kind": draw(st.sampled_from(["tool", "capability", "agent"])), "test_name": draw(_text),
        "target_name": draw(_text), "status": status, "passed": status == "pass",
        "score": draw(st.floats(0, 1)), "duration_s": draw(st.floats(0, 1e4)), "variant": draw(_maybe),
        "access_profile": draw(_maybe), "mock_profile": draw(_maybe), "model": draw(_maybe),
        "dialect": draw(_maybe), "config": draw(_maybe), "agent_state_hash": draw(_text),
        "mock_set_hash": draw(_maybe), "composite_hash": draw(_text),
        "evidence": draw(st.lists(st.dictionaries(_text, _json, max_size=4), max_size=3)),
        "skip_reason": draw(_maybe), "invoker": draw(_maybe),
        "turns": draw(st.none() | st.lists(st.lists(_text, max_size=3), max_size=3)),
        "repeat": draw(st.none() | st.integers(1, 50)), "repeats": draw(st.none() | st.dictionaries(_text, _json)),
        "flaky": draw(st.none() | st.booleans()),
    }


@settings(max_examples=300, deadline=None)
@given(fields())
def test_of_fields_is_model_construct(values: dict[str, Any]) -> None:
    ours = TestRecord.of_fields(dict(values))
    theirs = TestRecord.model_construct(**dict(values))
    assert ours == theirs
    assert ours.model_dump_json() == theirs.model_dump_json()
    assert ours.model_dump() == theirs.model_dump()
    assert ours.model_fields_set == theirs.model_fields_set
    assert ours.__pydantic_extra__ == theirs.__pydantic_extra__
    assert ours.__pydantic_private__ == theirs.__pydantic_private__


def test_fields_missing_or_extra_go_to_model_construct() -> None:
    partial = {"timestamp": "t", "run_id": "r"}
    assert TestRecord.of_fields(dict(partial)) == TestRecord.model_construct(**partial)
    assert TestRecord.of_fields(dict(partial)).model_fields_set == {"timestamp", "run_id"}
    assert TestRecord.of_fields(dict(partial)).skip_reason is None  # the default, as model_construct sets it
