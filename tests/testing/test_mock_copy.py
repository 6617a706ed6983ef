"""A mock's answer is a deep copy (`mocks.fresh_copy`): for plain data the same as `copy.deepcopy` — equal, of the
same types, sharing nothing with the mock data, shared and circular parts kept as deepcopy keeps them — and
deepcopy itself for anything else."""

import copy
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from open_agent_compiler.testing.mocks import fresh_copy

ATOMS = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), st.text(max_size=5))
PLAIN = st.recursive(ATOMS, lambda inner: st.one_of(st.lists(inner, max_size=3),
                                                    st.dictionaries(st.one_of(st.text(max_size=3), st.integers()),
                                                                    inner, max_size=3)), max_leaves=12)
ANY = st.recursive(st.one_of(ATOMS, st.tuples(ATOMS), st.builds(complex, st.integers(), st.integers())),
                   lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=3), inner,
                                                                                        max_size=3)), max_leaves=10)


def shape(value: Any, seen: dict[int, int]) -> Any:
    """Value, types and aliasing (which containers are the same object) of a structure."""
    if isinstance(value, (dict, list)):
        if id(value) in seen:
            return ("same", seen[id(value)])
        seen[id(value)] = len(seen)
        items = value.items() if isinstance(value, dict) else enumerate(value)
        return (type(value).__name__, [(type(k).__name__, k, shape(v, seen)) for k, v in items])
    return (type(value).__name__, repr(value))


def containers(value: Any, found: set[int]) -> set[int]:
    if isinstance(value, (dict, list)) and id(value) not in found:
        found.add(id(value))
        for item in (value.values() if isinstance(value, dict) else value):
            containers(item, found)
    return found


@settings(max_examples=400, deadline=None)
@given(value=st.one_of(PLAIN, ANY), share=st.booleans())
def test_fresh_copy_is_deepcopy(value: Any, share: bool) -> None:
    if share:  # one object reached twice: the copy reaches one copy twice, as deepcopy's does
        value = {"a": value, "b": value, "c": [value]}
    ours, theirs = fresh_copy(value), copy.deepcopy(value)
    assert shape(ours, {}) == shape(theirs, {}) == shape(value, {})
    assert not containers(ours, set()) & containers(value, set())  # nothing of the mock data is handed out


def test_a_circular_answer_is_copied_with_its_cycle() -> None:
    loop: dict[str, Any] = {"n": 1}
    loop["self"] = loop
    copied = fresh_copy(loop)
    assert copied is not loop and copied["self"] is copied and copied["n"] == 1


def test_subclasses_and_other_objects_go_to_deepcopy() -> None:
    class Tagged(dict):  # type: ignore[type-arg]
        pass

    value = {"t": Tagged(x=[1])}
    copied = fresh_copy(value)
    assert type(copied["t"]) is Tagged and copied["t"] == {"x": [1]} and copied["t"]["x"] is not value["t"]["x"]
