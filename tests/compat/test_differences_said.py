"""Where ours deliberately differs from 1.16.5, the user is told so where they look (evidence, skip reason, the
error line), and docs/compatibility.md's table lists it."""

from pathlib import Path

import pytest

from open_agent_compiler.testing.evaluation import (
    FactRecallEvaluator,
    PermissionAbsentEvaluator,
    PermissionPresentEvaluator,
    RegexEvaluator,
    RunContext,
    SubstringEvaluator,
    evaluate,
)
from open_agent_compiler.model.core.test_model import FactSpec

TABLE = (Path(__file__).resolve().parents[2] / "docs" / "compatibility.md").read_text().split(
    "## Deliberate differences", 1)[1]


def test_each_evaluator_difference_is_said_at_run_time() -> None:
    block = RunContext(permissions={"bash": {"*": "allow", "ls *": "ask", "rm *": "deny"}})
    asked = evaluate(PermissionAbsentEvaluator(permission_key="bash", bash_pattern="ls *"), block)
    assert not asked.passed and "ask counts as present here; 1.16.5 counts only allow" in asked.evidence
    fallback = evaluate(PermissionPresentEvaluator(permission_key="bash", bash_pattern="git log"), block)
    assert fallback.passed and "1.16.5 would look the exact pattern up only" in fallback.evidence
    denied = RunContext(permissions={"bash": {"*": "deny"}})
    no_bash = evaluate(PermissionPresentEvaluator(permission_key="bash"), denied)
    assert not no_bash.passed and "1.16.5 counts any bash block as present" in no_bash.evidence
    for evaluator in (SubstringEvaluator(needle="None"), RegexEvaluator(pattern="None"),
                      FactRecallEvaluator(facts=(FactSpec(any_of=("None",)),))):
        skipped = evaluate(evaluator, RunContext(output=None))
        assert skipped.skipped and "1.16.5 would search the text 'None'" in skipped.skip_reason


def test_the_table_lists_the_differences_of_this_round() -> None:
    for phrase in ("`permission_absent` counts `ask` as present", "every rule denies grants no bash",
                   "A `permission_key` other than `bash` next to a `bash_pattern`",
                   "selects no test out of a config that has tests is exit 2",
                   "A `callable` mock receives a model built from the input",
                   "`UsageError` (bad `CompileScript` arguments) and `FactoryError`",
                   "the skip reason says so"):
        assert phrase in TABLE, phrase


def test_an_evaluator_kind_without_implementation_fails_and_says_1_16_5_would_skip() -> None:
    from open_agent_compiler.model.core.evaluator import Evaluator

    class Unimplemented(Evaluator):
        kind: str = "not-registered"

    result = evaluate(Unimplemented(), RunContext(output="x"))
    assert not result.passed and not result.skipped
    assert "no implementation for evaluator kind 'not-registered'" in result.evidence
    assert "1.16.5 would skip it" in result.evidence
    assert "An evaluator kind with no implementation fails" in TABLE


def _widgets():  # type: ignore[no-untyped-def]
    import importlib.util

    path = Path(__file__).resolve().parent / "registries" / "json_tools" / "widgets.py"
    spec = importlib.util.spec_from_file_location("json_tools_widgets", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _compiled(dialect: str, registry):  # type: ignore[no-untyped-def]
    from open_agent_compiler.compiler.dialects import DIALECTS

    return DIALECTS[dialect].compile(registry.resolve_config("default"))


def test_opencode_says_how_json_format_tools_differ_from_1_16_5() -> None:
    from open_agent_compiler.compiler.frontmatter import parse_markdown

    widgets = _widgets()
    output = _compiled("opencode", widgets.registry())
    said = [w for w in output.warnings if "JSON-format tools" in w]
    assert len(said) == 1 and said[0].startswith("opencode: unlike open-agent-compiler 1.16.5: ")
    assert "('primary': widget; 'checker': widget)" in said[0]  # json, and the "both" override
    assert "no `<tool>: allow` permission and no `custom_tools` block" in said[0] and "1.16.5" in said[0]
    for name in ("primary", "checker"):
        config = parse_markdown(output.file_map()[f".opencode/agents/{name}.md"], name)[0]
        assert "custom_tools" not in config and "widget" not in config["permission"]
        assert config["permission"]["bash"][widgets.COMMAND] == "allow"
    # a tool offered in bash format only: nothing to say
    assert not [w for w in _compiled("opencode", widgets.registry(json_format=False)).warnings
                if "JSON-format tools" in w]
    assert "OpenCode 1.18.33 moves `custom_tools`" in TABLE


def test_pi_says_how_its_tool_lists_differ_from_1_16_5() -> None:
    said = [w for w in _compiled("pi", _widgets().registry()).warnings if w.startswith("pi: unlike")]
    assert len(said) == 1
    assert "no `bash` tool for 'helper'" in said[0] and "'checker'" not in said[0]  # checker runs the widget
    assert "`Agent` (pi-subagents' subagent tool), not `task`, for 'primary'" in said[0]
    assert "pi-subagents 0.14 has no tool named `task`" in TABLE


# Issue 34's list of 1.16.5 behaviours that still differ, and its item 6: each one that is not matched is a row
# of the table (its phrase) and is said at run time (what the check finds). Matched ones are checked where they
# were matched (tests/compat/test_migration_surface.py, test_evaluator_behaviour.py, ...).
def _opencode_line(**options) -> str:  # type: ignore[no-untyped-def]
    return next(w for w in _compiled("opencode", _widgets().registry(**options)).warnings
                if w.startswith("opencode: unlike open-agent-compiler 1.16.5: "))


def _claude_deny() -> str:
    return next(w for w in _compiled("claude", _widgets().registry()).warnings if "permissions.deny" in w)


def _codex_stdio() -> str:
    return next(w for w in _compiled("codex", _widgets().registry(stdio_server=True)).warnings if "'wiki'" in w)


SAID = [
    ("is not listed under `permissions.deny`", _claude_deny,
     "settings.json lists no `permissions.deny` for Write, Edit, which no agent is granted"),
    ("OpenCode agent files carry `temperature:`", lambda: _opencode_line(temperature=0.2),
     "`temperature` is written for 'primary' (1.16.5 leaves it out)"),
    ("rather than `read: allow`", _opencode_line,
     "read is granted to 'checker', 'helper' with OpenCode's own rule that denies `.env` files"),
    ("never Python `UserWarning`s", _codex_stdio, "MCP server 'wiki' has neither command nor url"),
]


@pytest.mark.parametrize(("row", "line", "said"), SAID, ids=[row for row, _, _ in SAID])
def test_each_difference_of_the_issue_is_a_row_and_said_at_compile_time(row: str, line, said: str) -> None:  # type: ignore[no-untyped-def]
    assert row in TABLE
    assert said in line()


def test_the_rows_of_test_time_differences_are_in_the_table() -> None:
    # said at run time: tests/compat/test_sequence_dict_items.py, tests/testing/test_handler_resources.py
    for row in ("The public package reads a dict item with a key of `MockResponse`",
                "1.16.5's tool tests call `execute(input)` without them"):
        assert row in TABLE, row


def test_the_opencode_line_says_nothing_that_does_not_apply() -> None:
    line = _opencode_line(json_format=False)
    assert "temperature" not in line and "JSON-format" not in line
