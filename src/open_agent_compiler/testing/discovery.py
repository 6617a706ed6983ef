"""Find every test of a resolved config, with stable ids, once each.

Ids: `capability:<slot>::<name>`, `tool:<tool>::<name>`, `agent:<slot>::<name>`. A tool reachable from several
agents contributes its tests once; two different definitions behind one id are an error naming both places.
"""

import json
import re
from collections.abc import Iterable
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from open_agent_compiler.errors import NothingSelected, OacError, RegistryError
from open_agent_compiler.model.core.base import SharedFieldsSet, unvalidated
from open_agent_compiler.model.core.test_model import AgentTest, CapabilityTest, ToolTest
from open_agent_compiler.model.core.tool import ToolDefinition
from open_agent_compiler.model.registry import ResolvedAgent, ResolvedConfig

TestKind = Literal["capability", "tool", "agent"]
KINDS: tuple[TestKind, ...] = ("capability", "tool", "agent")


class TestCase(SharedFieldsSet):
    """One discovered test and what it runs against."""

    model_config = ConfigDict(frozen=True)
    __test__ = False  # not a pytest class

    test_id: str
    kind: TestKind
    name: str
    target_name: str  # compiled agent name, or tool name
    where: str
    test: CapabilityTest | ToolTest | AgentTest
    found_in: str  # slot of the first agent this test was found through (tool tests included)
    slot: str | None = None
    tool: ToolDefinition | None = None

    @property
    def mock_profile(self) -> str | None:
        test = self.test  # (read once: a pydantic model's attribute is a slow read in 3.11)
        return None if isinstance(test, CapabilityTest) else test.mock_profile

    @classmethod
    def found(cls, test_id: str, kind: TestKind, name: str, target_name: str, where: str,
              test: CapabilityTest | ToolTest | AgentTest, found_in: str, *, slot: str | None = None,
              tool: ToolDefinition | None = None) -> "TestCase":
        """The case discovery found: what `TestCase(...)` with these fields gives (the same objects, the same
        fields set), without validating values discovery takes from validated definitions and formats itself
        (`test` is the instance a `capability_tests`/`tool_tests`/`agent_tests` field holds, `tool` a resolved
        tool). Validation cost ~28,000 instructions a case: 3.8 % of a warm 5,000-test run."""
        return unvalidated(cls, {
            "test_id": test_id, "kind": kind, "name": name, "target_name": target_name, "where": where, "test": test,
            "found_in": found_in, "slot": slot, "tool": tool},
            _GIVEN_WITH_TOOL if tool is not None else _GIVEN_WITH_SLOT)


# The fields a discovered case is given (a tool test names its tool, the others their slot), one set each that
# every such case shares, as `SharedFieldsSet` shares them (never changed in place).
_GIVEN = {"test_id", "kind", "name", "target_name", "where", "test", "found_in"}
_GIVEN_WITH_SLOT = _GIVEN | {"slot"}
_GIVEN_WITH_TOOL = _GIVEN | {"tool"}


def _tool_cases(agent: ResolvedAgent) -> list[TestCase]:
    cases = []
    for r in agent.tools:
        tool = r.tool
        if not tool.tool_tests:
            continue
        name = tool.name
        for test in tool.tool_tests:
            if test.tool not in (None, name):
                raise RegistryError(f"tool test {test.name!r} on tool {name!r} names another tool {test.tool!r}")
            cases.append(_tool_case(tool, test, f"tool {name!r} ({r.where})", agent.slot, name))
    scoped = [(t, f"slot {agent.slot!r} tool_tests") for t in agent.definition.tool_tests]
    for skill in agent.definition.skills:
        scoped += [(t, f"slot {agent.slot!r} skill {skill.name!r} tool_tests") for t in skill.tool_tests]
    reachable = {r.tool.name: r for r in agent.tools} if scoped else {}
    for test, where in scoped:
        if test.tool is None:
            raise RegistryError(f"tool test {test.name!r} in {where} must name its tool (ToolTest.tool)")
        if test.tool not in reachable:
            raise RegistryError(f"tool test {test.name!r} in {where} names tool {test.tool!r}, not reachable there")
        cases.append(_tool_case(reachable[test.tool].tool, test, where, agent.slot))
    return cases


def _tool_case(tool: ToolDefinition, test: ToolTest, where: str, found_in: str, name: str | None = None) -> TestCase:
    name = tool.name if name is None else name
    test_name = test.name
    return TestCase.found(f"tool:{name}::{test_name}", "tool", test_name, name, where, test, found_in, tool=tool)


def discover(resolved: ResolvedConfig) -> list[TestCase]:
    """All tests of the config in a stable order (slots in template order, then kinds)."""
    found: dict[str, TestCase] = {}

    def add(case: TestCase) -> None:
        first = found.setdefault(case.test_id, case)
        if first is case:
            return
        if first.test != case.test or first.tool != case.tool:
            raise RegistryError(f"two different tests have id {case.test_id!r}: in {first.where} and in {case.where}")

    for agent in resolved.agents:
        slot, compiled_name, definition = agent.slot, agent.compiled_name, agent.definition
        where = f"slot {slot!r}"
        for test in definition.capability_tests:
            test_name = test.name
            add(TestCase.found(f"capability:{slot}::{test_name}", "capability", test_name, compiled_name,
                               f"{where} capability_tests", test, slot, slot=slot))
        for case in _tool_cases(agent):
            add(case)
        for test in definition.agent_tests:
            test_name = test.name
            add(TestCase.found(f"agent:{slot}::{test_name}", "agent", test_name, compiled_name,
                               f"{where} agent_tests", test, slot, slot=slot))
    cases = list(found.values())
    _check_profiles(cases, resolved)
    _check_texts(cases)
    return cases


_SURROGATE = re.compile("[\ud800-\udfff]")


def _bad_text(value: Any, path: str) -> str | None:
    """The path of the first string under `value` holding a lone surrogate (not valid Unicode text), or None."""
    if isinstance(value, str):
        return path if _SURROGATE.search(value) else None
    if isinstance(value, dict):
        for key, item in value.items():
            found = _bad_text(key, f"{path} key") or _bad_text(item, f"{path}.{key}")
            if found:
                return found
    elif isinstance(value, (list, tuple)):
        for index, item in enumerate(value):
            if found := _bad_text(item, f"{path}[{index}]"):
                return found
    return None


def _encodes(value: Any) -> bool:
    """True when `value` is valid Unicode all through (the fast path: one C-level encode, no walk)."""
    try:
        json.dumps(value, ensure_ascii=False, default=str).encode("utf-8")
    except UnicodeEncodeError:
        return False
    except (TypeError, ValueError):
        return True  # not JSON at all: not this check's business
    return True


def _texts(case: TestCase) -> dict[str, Any]:
    """What of a test reaches a tool or a model as text: its input, its prompts."""
    test = case.test
    if isinstance(test, ToolTest):
        return {"input": test.input}
    if isinstance(test, AgentTest):
        return {"prompt": test.prompt, "turns.prompt": [t.prompt for t in test.turns]}
    return {}


def _check_texts(cases: list[TestCase]) -> None:
    """Test inputs and prompts must be text a tool or a model can receive: no lone surrogates. One encode of
    all of them is the fast path; only when it fails is each test walked to name the culprit."""
    everything = [c.test.input if isinstance(c.test, ToolTest) else _texts(c) for c in cases
                  if not isinstance(c.test, CapabilityTest)]
    if _encodes(everything):
        return
    for case in cases:
        texts = _texts(case)
        where = next((found for path, value in texts.items() if (found := _bad_text(value, path))), None)
        if where:
            raise RegistryError(f"test {case.test_id.encode('utf-8', 'backslashreplace').decode()!r}: {where} "
                                f"holds a lone surrogate, which is not valid Unicode text (no tool or model can "
                                f"receive it)")


def closest(name: str, known: Iterable[str]) -> str:
    """`, did you mean 'x'?` for the nearest known name, or '' when none is near."""
    import difflib  # (only for a message: a run without errors never loads it)

    near = difflib.get_close_matches(name, list(known), n=1)
    return f", did you mean {near[0]!r}?" if near else ""


def _check_profiles(cases: list[TestCase], resolved: ResolvedConfig) -> None:
    """Every profile a test uses is registered, and every tool it mocks exists in the config: an entry for a
    misspelt tool would silently leave the real handler running."""
    tested: set[str] | None = None  # tools with tests: almost every entry is found here, cheaply
    every: set[str] | None = None  # all reachable tools, collected only when an entry is not in `tested`
    checked: set[str] = set()
    for case in cases:
        profile = case.mock_profile
        if profile is None or profile in checked:
            continue
        if profile not in resolved.mock_profiles:
            known = ", ".join(sorted(resolved.mock_profiles)) or "none"
            raise RegistryError(f"test {case.test_id!r} uses unknown mock profile {profile!r} (registered: {known})"
                                + closest(profile, resolved.mock_profiles))
        checked.add(profile)
        if tested is None:
            tested = {c.target_name for c in cases if c.kind == "tool"}
        for tool in resolved.mock_profiles[profile].responses:
            if tool in tested:
                continue
            if every is None:
                every = {r.tool.name for r in resolved.tools()}
            if tool not in every:
                listed = f" (tools: {', '.join(sorted(every)) or 'none'})" if len(every) <= 12 else ""
                raise RegistryError(f"mock profile {profile!r} mocks tool {tool!r}, which config "
                                    f"{resolved.config.name!r} does not have{closest(tool, every)}{listed}")


def _as_tuple(value: str | Iterable[str] | None) -> tuple[str, ...]:
    if value is None:
        return ()
    return (value,) if isinstance(value, str) else tuple(value)


def select(cases: list[TestCase], *, kind: str | Iterable[str] | None = None,
           text: str | Iterable[str] | None = None) -> list[TestCase]:
    """Keep tests of any of the `kind`s whose name or id contains any of the `text`s (none given: all).

    A `--kind`/`--filter` that keeps nothing out of a non-empty set is an error: the user asked for tests that
    are not there (1.16.5 exits 0 here). A config without tests selects nothing and is not an error.
    """
    kinds, texts = _as_tuple(kind), tuple(t for t in _as_tuple(text) if t)
    for wanted in kinds:
        if wanted not in KINDS:
            raise OacError(f"unknown test kind {wanted!r} (kinds: {', '.join(KINDS)})")
    chosen = [
        c for c in cases
        if (not kinds or c.kind in kinds) and (not texts or any(t in c.name or t in c.test_id for t in texts))
    ]
    asked = " ".join([*(f"--kind {k}" for k in kinds), *(f"--filter {t!r}" for t in texts)])
    if not chosen and cases and asked:
        raise NothingSelected(f"no tests selected ({asked} matched none of the {len(cases)} tests; unlike 1.16.5, "
                              "a selection that matches nothing is an error)")
    return chosen
