"""Frozen models share one `__pydantic_fields_set__` per distinct set of given fields (`SharedFieldsSet`), and what
pydantic says about the given fields stays each instance's own."""

import copy
import pickle

from pydantic import ConfigDict

from open_agent_compiler import CapabilityTest, ToolDefinition, ToolTest
from open_agent_compiler.model.core.base import Frozen
from open_agent_compiler.model.core.tool import ToolDefinitionHeader
from open_agent_compiler.testing.discovery import TestCase
from open_agent_compiler.keys.key import KeyParts


def _header(name: str, **more: object) -> ToolDefinitionHeader:
    return ToolDefinitionHeader(name=name, description="d", **more)


def test_equal_given_fields_share_one_set() -> None:
    first, second = _header("a"), _header("b")
    assert first.model_fields_set == {"name", "description"}
    assert first.__pydantic_fields_set__ is second.__pydantic_fields_set__
    parts = [KeyParts(definition=str(i), target="t", files={"f": "x"}) for i in range(3)]
    assert len({id(p.__pydantic_fields_set__) for p in parts}) == 1


def test_other_given_fields_keep_their_own_set() -> None:
    plain, more, plain_again = _header("a"), _header("b", usage_explanation_short="2"), _header("c")
    assert plain.model_fields_set == {"name", "description"}
    assert more.model_fields_set == {"name", "description", "usage_explanation_short"}
    assert plain_again.model_fields_set == {"name", "description"}
    assert plain.model_dump(exclude_unset=True) == {"name": "a", "description": "d"}
    assert more.model_dump(exclude_unset=True) == {"name": "b", "description": "d", "usage_explanation_short": "2"}


def test_shapes_built_in_turns_each_share_one_set() -> None:
    headers = [_header(f"h{i}", **({"usage_explanation_short": "2"} if i % 2 else {})) for i in range(6)]
    assert len({id(h.__pydantic_fields_set__) for h in headers}) == 2
    assert [h.model_fields_set for h in headers[:2]] == [{"name", "description"},
                                                         {"name", "description", "usage_explanation_short"}]
    tests = [CapabilityTest(name=f"c{i}", must_have_bash_patterns=["ls"]) for i in range(3)]
    tools = [ToolDefinition(header=_header(f"t{i}")) for i in range(3)]
    cases = []
    for test, tool in zip(tests, tools, strict=True):  # discovery's order: an agent's capability, then tool tests
        cases.append(TestCase(test_id=f"capability:s::{test.name}", kind="capability", name=test.name,
                              target_name="s", where="here", test=test, found_in="s", slot="s"))
        cases.append(TestCase(test_id=f"tool:{tool.name}::x", kind="tool", name="x", target_name=tool.name,
                              where="there", test=ToolTest(name="x"), found_in="s", tool=tool))
    assert len({id(c.__pydantic_fields_set__) for c in cases}) == 2
    for case in cases:
        assert case.model_fields_set == set(case.model_dump(exclude_unset=True))


def test_copies_with_updates_do_not_touch_the_shared_set() -> None:
    first, second = _header("a"), _header("b")
    for changed in (first.model_copy(update={"usage_explanation_short": "9"}), first.model_copy(update={"usage_explanation_short": "9"}, deep=True)):
        assert changed.model_fields_set == {"name", "description", "usage_explanation_short"}
    for copied in (copy.copy(first), copy.deepcopy(first), pickle.loads(pickle.dumps(first))):
        assert copied.model_fields_set == {"name", "description"}
    assert first.model_fields_set == second.model_fields_set == {"name", "description"}


def test_assignment_is_refused_before_the_set_is_touched() -> None:
    first, second = _header("a"), _header("b")
    try:
        first.usage_explanation_short = "3"  # type: ignore[misc]
    except Exception:  # noqa: BLE001 - pydantic's frozen error
        pass
    assert "usage_explanation_short" not in second.model_fields_set


class _Thawed(Frozen):
    model_config = ConfigDict(frozen=False)

    name: str
    note: str = ""


def test_a_class_that_is_not_frozen_keeps_its_own_sets() -> None:
    first, second = _Thawed(name="a"), _Thawed(name="b")
    assert first.__pydantic_fields_set__ is not second.__pydantic_fields_set__
    first.note = "set later"
    assert first.model_fields_set == {"name", "note"}
    assert second.model_fields_set == {"name"}


def test_nested_and_validated_from_dicts() -> None:
    tools = [ToolDefinition.model_validate({"header": {"name": f"t{i}", "description": "d"}}) for i in range(2)]
    assert tools[0].header.__pydantic_fields_set__ is tools[1].header.__pydantic_fields_set__
    tests = [CapabilityTest(name=f"c{i}", must_have_bash_patterns=["ls"]) for i in range(2)]
    cases = [TestCase(test_id=f"capability:s::{t.name}", kind="capability", name=t.name, target_name="s",
                      where="here", test=t, found_in="s", slot="s") for t in tests]
    assert cases[0].__pydantic_fields_set__ is cases[1].__pydantic_fields_set__
    assert cases[0].model_fields_set == set(cases[0].model_dump(exclude_unset=True))
