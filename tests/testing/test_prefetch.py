"""HandlerPrefetch starts upcoming handlers ahead of their turn, never one twice, and only where it was made."""

import pytest

from open_agent_compiler.execution import prefetch as prefetch_module
from open_agent_compiler.execution.prefetch import HandlerPrefetch


class FakeStarted:
    def __init__(self, name: str, log: list[str]) -> None:
        self.name = name
        self.log = log
        log.append(f"start {name}")

    def pump(self) -> None:
        pass

    def cancel(self) -> None:
        self.log.append(f"cancel {self.name}")


def _prefetch(names: str, log: list[str], ahead: int = 2) -> HandlerPrefetch:
    return HandlerPrefetch([(name, lambda name=name: FakeStarted(name, log)) for name in names], ahead=ahead)


def test_starts_at_most_ahead_in_order_and_hands_each_over_once() -> None:
    log: list[str] = []
    fetch = _prefetch("abcd", log)
    fetch.top_up()
    assert log == ["start a", "start b"]
    first = fetch.take("a")
    assert first is not None and first.name == "a" and fetch.take("a") is None
    fetch.top_up()
    assert log == ["start a", "start b", "start c"]


def test_a_test_taken_before_its_handler_started_is_never_started_later() -> None:
    log: list[str] = []
    fetch = _prefetch("abc", log, ahead=1)
    fetch.top_up()
    assert fetch.take("c") is None  # its turn came first: the runner starts it itself
    fetch.take("a")
    fetch.top_up()
    fetch.take("b")
    fetch.top_up()
    assert log == ["start a", "start b"]


def test_close_cancels_what_was_started_but_not_taken() -> None:
    log: list[str] = []
    fetch = _prefetch("abc", log)
    fetch.top_up()
    fetch.take("a")
    fetch.close()
    fetch.top_up()
    assert log == ["start a", "start b", "cancel b"]


def test_another_process_never_starts_or_takes(monkeypatch: pytest.MonkeyPatch) -> None:
    log: list[str] = []
    fetch = _prefetch("ab", log)
    real = prefetch_module.os.getpid()
    monkeypatch.setattr(prefetch_module.os, "getpid", lambda: real + 1)  # as in a doit -n worker (a fork)
    fetch.top_up()
    assert fetch.take("a") is None and log == []
