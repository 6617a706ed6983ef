"""resolve_mock and reachable_mock_entries."""

from open_agent_compiler.model.core.mock import MockProfile, MockResponse
from open_agent_compiler.testing.mocks import reachable_mock_entries, resolve_mock

DEFAULT = MockResponse(kind="fixed", fixed_output={"from": "tool.mock"})
CI_ECHO = MockResponse(kind="fixed", fixed_output={"from": "profile.ci"})
CI = MockProfile(name="ci", responses={"echo-tool": CI_ECHO, "other-tool": MockResponse(kind="echo")})


def test_profile_entry_wins_over_the_tool_default() -> None:
    assert resolve_mock("echo-tool", DEFAULT, CI) == (CI_ECHO, "profile:ci")


def test_tool_default_when_the_profile_has_no_entry_or_there_is_no_profile() -> None:
    assert resolve_mock("third-tool", DEFAULT, CI) == (DEFAULT, "tool.mock")
    assert resolve_mock("echo-tool", DEFAULT, None) == (DEFAULT, "tool.mock")


def test_real_handler_when_nothing_mocks_the_tool() -> None:
    assert resolve_mock("third-tool", None, CI) == (None, "handler")
    assert resolve_mock("third-tool", None, None) == (None, "handler")


def test_profile_entry_applies_even_without_a_default() -> None:
    assert resolve_mock("other-tool", None, CI)[1] == "profile:ci"


def test_reachable_entries_hold_only_the_winning_entry() -> None:
    reached = reachable_mock_entries("echo-tool", DEFAULT, CI)
    assert reached["source"] == "profile:ci" and reached["response"]["fixed_output"] == {"from": "profile.ci"}
    edited_elsewhere = MockProfile(name="ci", responses={**CI.responses, "other-tool": MockResponse(kind="fixed", fixed_output={"n": 0})})
    changed_default = MockResponse(kind="fixed", fixed_output="shadowed")
    assert reachable_mock_entries("echo-tool", changed_default, edited_elsewhere) == reached


def test_reachable_entries_change_when_the_reached_data_changes() -> None:
    base = reachable_mock_entries("echo-tool", DEFAULT, None)
    assert base == {"tool": "echo-tool", "source": "tool.mock", "response": DEFAULT.model_dump(mode="json")}
    other = reachable_mock_entries("echo-tool", MockResponse(kind="fixed", fixed_output={"from": "x"}), None)
    assert other != base
    assert reachable_mock_entries("echo-tool", None, CI) != reachable_mock_entries("echo-tool", None, None)
    assert reachable_mock_entries("x", None, None) == {"tool": "x", "source": "handler", "response": None}
