"""MockSession: what a mocked call returns, per kind, and how state lives for one session."""

import textwrap
from pathlib import Path
from typing import Any

import pytest

from open_agent_compiler.errors import OacError
from open_agent_compiler.model.core.mock import MockResponse
from open_agent_compiler.testing.mocks import MockSession, load_mock_callable


def write_module(root: Path, name: str, source: str) -> str:
    (root / f"{name}.py").write_text(textwrap.dedent(source))
    return name


@pytest.fixture()
def module_name(tmp_path: Path) -> str:
    """A module name unique to this test, so sys.modules caching cannot leak between tests."""
    return "oac_mock_" + "".join(ch if ch.isalnum() else "_" for ch in tmp_path.name)


def test_fixed_returns_a_copy_callers_cannot_mutate() -> None:
    response = MockResponse(kind="fixed", fixed_output={"items": [1, 2]})
    session = MockSession()
    first = session.call("t", response, {})
    first["items"].append(3)
    assert session.call("t", response, {}) == {"items": [1, 2]}
    assert response.fixed_output == {"items": [1, 2]}


def test_sequence_gives_item_n_for_call_n_then_repeats_the_last() -> None:
    response = MockResponse(kind="sequence", sequence=("a", "b", "c"))
    session = MockSession()
    assert [session.call("t", response, {}) for _ in range(5)] == ["a", "b", "c", "c", "c"]
    assert session.calls("t") == 5


def test_sequence_counters_are_per_tool_and_per_session() -> None:
    response = MockResponse(kind="sequence", sequence=(1, 2))
    session = MockSession()
    assert [session.call("x", response, {}), session.call("y", response, {}), session.call("x", response, {})] == [1, 1, 2]
    assert MockSession().call("x", response, {}) == 1


def test_echo_returns_the_input_without_aliasing_it() -> None:
    payload = {"text": "hi", "tags": ["a"]}
    echoed = MockSession().call("t", MockResponse(kind="echo"), payload)
    assert echoed == payload
    echoed["tags"].append("b")
    assert payload == {"text": "hi", "tags": ["a"]}


def test_callable_is_imported_from_the_project_root_and_called_with_the_input(
    tmp_path: Path, module_name: str
) -> None:
    write_module(tmp_path, module_name, """
        def shout(payload):
            return {"text": payload["text"].upper()}
    """)
    session = MockSession(project_root=tmp_path)
    response = MockResponse(kind="callable", callable_spec=f"{module_name}:shout")
    assert session.call("t", response, {"text": "hi"}) == {"text": "HI"}
    assert str(tmp_path) not in __import__("sys").path  # the root is only on sys.path while importing


def test_stateful_callable_state_persists_within_a_session_and_is_isolated_between_sessions(
    tmp_path: Path, module_name: str
) -> None:
    write_module(tmp_path, module_name, """
        def counter(payload, state):
            seen = state.scratchpad.setdefault("seen", [])
            seen.append(payload["n"])
            return {"call": state.call_index, "tool": state.tool_name, "seen": list(seen)}
    """)
    response = MockResponse(kind="stateful_callable", callable_spec=f"{module_name}:counter")
    first = MockSession(project_root=tmp_path)
    outputs = [first.call("monitor", response, {"n": n}) for n in (10, 20, 30)]
    assert outputs == [
        {"call": 0, "tool": "monitor", "seen": [10]},
        {"call": 1, "tool": "monitor", "seen": [10, 20]},
        {"call": 2, "tool": "monitor", "seen": [10, 20, 30]},
    ]
    assert first.state("monitor").scratchpad == {"seen": [10, 20, 30]}
    second = MockSession(project_root=tmp_path)
    assert second.call("monitor", response, {"n": 99}) == {"call": 0, "tool": "monitor", "seen": [99]}
    assert second.call("other", response, {"n": 1})["seen"] == [1]  # state is per tool too


def test_a_raising_mock_callable_propagates_and_still_counts_the_call(tmp_path: Path, module_name: str) -> None:
    write_module(tmp_path, module_name, """
        def fail(payload, state):
            raise ValueError("mock says no")
    """)
    session = MockSession(project_root=tmp_path)
    response = MockResponse(kind="stateful_callable", callable_spec=f"{module_name}:fail")
    with pytest.raises(ValueError, match="mock says no"):
        session.call("t", response, {})
    assert session.calls("t") == 1


@pytest.mark.parametrize(
    "attribute, message",
    [("nope", "has no attribute 'nope'"), ("VALUE", "not callable")],
)
def test_bad_attribute_is_a_one_line_oac_error_naming_the_spec(
    tmp_path: Path, module_name: str, attribute: str, message: str
) -> None:
    write_module(tmp_path, module_name, "VALUE = 3\n")
    spec = f"{module_name}:{attribute}"
    with pytest.raises(OacError) as caught:
        MockSession(project_root=tmp_path).call("t", MockResponse(kind="callable", callable_spec=spec), {})
    text = str(caught.value)
    assert spec in text and message in text and "\n" not in text


def test_missing_module_is_a_one_line_oac_error(tmp_path: Path, module_name: str) -> None:
    spec = f"{module_name}_absent.sub:fn"
    with pytest.raises(OacError) as caught:
        load_mock_callable(spec, tmp_path)
    assert str(caught.value) == (f"mock callable {spec!r}: no module '{module_name}_absent.sub' importable from "
                                 f"{tmp_path}")


def test_module_failing_at_import_is_a_one_line_oac_error(tmp_path: Path, module_name: str) -> None:
    write_module(tmp_path, module_name, """
        import oac_dependency_that_does_not_exist
    """)
    broken = f"{module_name}_broken"
    write_module(tmp_path, broken, 'raise RuntimeError("bad\\nconfig")\n')
    with pytest.raises(OacError, match="importing .* failed: ModuleNotFoundError") as missing_dep:
        load_mock_callable(f"{module_name}:fn", tmp_path)
    assert "\n" not in str(missing_dep.value)
    with pytest.raises(OacError, match="RuntimeError: bad config") as raised:
        load_mock_callable(f"{broken}:fn", tmp_path)
    assert f"{broken}:fn" in str(raised.value)


def test_dotted_attribute_specs_resolve(tmp_path: Path, module_name: str) -> None:
    write_module(tmp_path, module_name, """
        class Mocks:
            @staticmethod
            def double(payload):
                return payload * 2
    """)
    function: Any = load_mock_callable(f"{module_name}:Mocks.double", tmp_path)
    assert function(21) == 42
