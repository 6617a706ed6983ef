"""A resolved agent's content digest (JSON from pydantic, blurrable positions tagged) keeps apart what JSON
would not: values that differ only in a JSON-lossy way (tuple/list, int/str keys, 1/1.0/True, bytes/str,
NaN/None, set/list, Path/str), at every `Any` position of mocks, tests and evaluators, give different digests;
equal content gives equal digests, in this process and in others with another hash seed."""

import json
import math
import os
import subprocess
import sys
from pathlib import Path, PurePosixPath
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from digest_agents import POSITIONS, agent_with
from open_agent_compiler import MockResponse
from open_agent_compiler.model.hashing import digest_model_json, tagged

HERE = Path(__file__).resolve().parent


def shape(value: Any) -> Any:
    """What the digest promises to tell apart: every type, float bits, order of str-keyed dicts and sequences;
    sets and dicts with other keys as sets (their tagged form is sorted)."""
    kind = type(value)
    if kind is float:
        return ("float", "nan" if math.isnan(value) else value.hex())
    if kind in (str, int, bool, bytes) or value is None:
        return (kind.__name__, value)
    if kind in (list, tuple):
        return (kind.__name__, tuple(shape(v) for v in value))
    if kind in (set, frozenset):
        return (kind.__name__, frozenset(shape(v) for v in value))
    if kind is dict:
        pairs = tuple((shape(k), shape(v)) for k, v in value.items())
        return ("dict", pairs if all(type(k) is str for k in value) else frozenset(pairs))
    if isinstance(value, PurePosixPath):
        return ("path", str(value))
    if isinstance(value, MockResponse):
        return ("mock", shape(value.kind), shape(value.fixed_output))
    raise AssertionError(f"no shape for {value!r}")


scalars = st.one_of(
    st.none(), st.booleans(), st.integers(-3, 3), st.sampled_from([1.0, 0.0, -0.0, 2.5, math.nan, math.inf, -math.inf]),
    st.sampled_from(["", "a", "1", "None", "nan", "__oac_tuple"]), st.sampled_from([b"", b"a", b"1"]),
    st.sampled_from([PurePosixPath("a"), PurePosixPath("1")]),
)
keys = st.one_of(st.sampled_from(["a", "1", "__oac_dict"]), st.integers(0, 2), st.booleans(), st.none())
values = st.recursive(scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=3), st.lists(inner, max_size=3).map(tuple),
    st.sets(st.one_of(st.integers(0, 3), st.sampled_from(["a", "b", "1"])), max_size=3),
    st.frozensets(st.sampled_from(["a", "b", "1"]), max_size=3),
    st.dictionaries(keys, inner, max_size=3),
    st.builds(lambda out: MockResponse(kind="fixed", fixed_output=out), st.sampled_from([1, "1", (1,), [1]])),
), max_leaves=6)


def _blur(value: Any) -> Any:
    """`value` with one JSON-lossy change at its top (what pydantic's JSON writes alike), or itself."""
    if type(value) is tuple:
        return list(value)
    if type(value) is list:
        return tuple(value)
    if type(value) in (set, frozenset):
        return sorted(value, key=repr)
    if type(value) is dict:
        return {str(k) if not isinstance(k, str) else k: _blur(v) for k, v in value.items()}
    if type(value) is bool:
        return int(value)
    if type(value) is int:
        return float(value)
    if type(value) is float:
        return None if value - value != 0 else int(value) if value.is_integer() else value
    if type(value) is bytes:
        return value.decode()
    if isinstance(value, PurePosixPath):
        return str(value)
    return value


def _digest(position: str, value: Any) -> str:
    return agent_with(position, value).content_digest()


@settings(max_examples=150, deadline=None)
@given(st.sampled_from(POSITIONS), values, values)
def test_digests_differ_exactly_when_the_values_differ_in_type_or_content(position: str, one: Any, other: Any) -> None:
    assert (_digest(position, one) == _digest(position, other)) == (shape(one) == shape(other))


@settings(max_examples=150, deadline=None)
@given(st.sampled_from(POSITIONS), values)
def test_a_json_lossy_change_changes_the_digest(position: str, value: Any) -> None:
    blurred = _blur(value)
    assert (_digest(position, value) == _digest(position, blurred)) == (shape(value) == shape(blurred))


JSON_TWINS = [((1, 2), [1, 2]), ({1: "x"}, {"1": "x"}), (1, 1.0), (1, True), (1.0, True), (b"a", "a"),
              (math.nan, None), (math.inf, None), ({1, 2}, [1, 2]), (frozenset({"a"}), {"a"}),
              (PurePosixPath("a"), "a"), ({"k": (1,)}, {"k": [1]}), ([{"n": {2: 1}}], [{"n": {"2": 1}}]),
              ({"__oac_tuple": [1]}, (1,)), ({"__oac_float": "nan"}, math.nan), ({"__oac_path": "a"}, Path("a"))]


@pytest.mark.parametrize("position", POSITIONS)
@pytest.mark.parametrize(("one", "other"), JSON_TWINS, ids=[f"{a!r}-vs-{b!r}" for a, b in JSON_TWINS])
def test_values_json_writes_alike_get_different_digests(position: str, one: Any, other: Any) -> None:
    assert _digest(position, one) != _digest(position, other)


def test_the_top_keys_of_a_bare_dict_field_keep_their_type() -> None:
    from open_agent_compiler.model.core.tool import JsonToolPermission, ToolDefinitionLogicJson

    def schema_digest(schema: dict[Any, Any]) -> str:
        return digest_model_json(ToolDefinitionLogicJson(permission_json=JsonToolPermission(), input_schema=schema))

    assert schema_digest({1: "a"}) != schema_digest({"1": "a"})
    assert schema_digest({"a": (1,)}) != schema_digest({"a": [1]})


def test_json_dumps_outside_a_digest_are_what_they_always_were() -> None:
    mock = MockResponse(kind="sequence", sequence=((1, 2), {"k": math.nan}, b"a"))
    assert mock.model_dump_json() == '{"kind":"sequence","fixed_output":null,"sequence":[[1,2],{"k":null},"a"],' \
                                     '"callable_spec":null,"description":""}'
    assert mock.model_dump(mode="json")["sequence"] == [[1, 2], {"k": None}, "a"]
    assert mock.model_dump()["sequence"] == ((1, 2), {"k": mock.sequence[1]["k"]}, b"a")  # Python mode: as is
    agent = agent_with(temperature=math.inf)
    assert json.loads(agent.model_dump_json())["model_parameters"]["temperature"] is None
    schema = agent.model_json_schema(mode="serialization")["$defs"]["ModelParameters"]["properties"]["temperature"]
    assert schema["anyOf"] == [{"type": "number"}, {"type": "null"}]


_CROSS_PROCESS = '''
import json, math, sys
from pathlib import PurePosixPath
sys.path.insert(0, sys.argv[1])
from digest_agents import agent_with
from open_agent_compiler import MockResponse
values = [{"b", "a", "c", "1"}, frozenset({"x", "y", "z"}), {2: "a", "b": 1, None: (1,)}, math.nan,
          (MockResponse(kind="fixed", fixed_output={"s": {"p", "q"}}),), PurePosixPath("p"), b"raw", {"k": [1, (2,)]}]
print(json.dumps([agent_with(position, value).content_digest()
                  for position in ("fixed_output", "sequence", "expected") for value in values]))
'''


def test_equal_content_gives_equal_digests_in_other_processes() -> None:
    runs = set()
    for seed in ("0", "1", "12345"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        done = subprocess.run([sys.executable, "-c", _CROSS_PROCESS, str(HERE)], env=env, capture_output=True,
                              text=True, check=True)
        runs.add(done.stdout)
    assert len(runs) == 1
    assert len(set(json.loads(runs.pop()))) == 24


def test_tagged_keeps_a_plain_json_value_as_it_is() -> None:
    plain = {"a": 1, "b": "x", "c": None, "d": True}
    assert tagged(plain) is plain  # (the fast path: nothing to tag)
    assert tagged([1, "a"]) == [1, "a"]
    assert tagged({"a": 1.5}) == {"a": 1.5}
    assert tagged(math.nan) != tagged(None) and tagged(math.inf) != tagged(-math.inf)


@pytest.mark.parametrize(("one", "other"), JSON_TWINS, ids=[f"{a!r}-vs-{b!r}" for a, b in JSON_TWINS])
def test_mock_profiles_json_writes_alike_get_different_digests(one: Any, other: Any) -> None:
    """The key cache's per-agent scope digests the mock profiles a test names the same way."""
    from open_agent_compiler import MockProfile

    def profile(output: Any) -> MockProfile:
        return MockProfile(name="ci", responses={"t0": MockResponse(kind="sequence", sequence=(output,))})

    assert digest_model_json(profile(one)) != digest_model_json(profile(other))
    assert digest_model_json(profile(one)) == digest_model_json(profile(one))


def test_content_json_cannot_hold_takes_the_pickled_form() -> None:
    surrogate = agent_with("expected", "\ud800")  # a lone surrogate: pydantic's JSON refuses it
    assert surrogate.content_digest() == surrogate.content_digest()
    assert surrogate.content_digest() not in {_digest("expected", "\ufffd"), _digest("expected", "")}
