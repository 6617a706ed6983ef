"""Evaluator behaviour cases, run the same way under either package: ours (imported by
test_evaluator_behaviour.py) and the public open-agent-compiler 1.16.5 (run as a script with its interpreter,
printing the results as JSON). Only the public evaluation API is used: the evaluator classes of
`model.core.test_model`, `FactSpec`, and `evaluate(evaluator, RunContext(...))` of `testing.evaluation`.

A case is (id, kind, evaluator fields, run). A run has `output`, `tool_calls` ([name, args] pairs),
`permissions` (an artifact permission block) and `judge` (the mapping a stub judge returns). The outcome of a
case is `passed`, `score` (rounded), `skipped` and the sorted keys of `details`.
"""

import json
import sys
from typing import Any

Case = tuple[str, str, dict[str, Any], dict[str, Any]]

OPENCODE_BLOCK = {"read": "allow", "edit": "deny", "bash": {"*": "deny", "git status": "allow", "ls *": "ask"}}

CASES: list[Case] = [
    # equals / json_path
    ("equals-whole", "equals", {"expected": {"a": 1}}, {"output": {"a": 1}}),
    ("equals-differs", "equals", {"expected": 2}, {"output": 3}),
    ("equals-field", "equals", {"expected": "x", "field": "a.b"}, {"output": {"a": {"b": "x"}}}),
    ("equals-field-missing", "equals", {"expected": "x", "field": "a.c"}, {"output": {"a": {"b": "x"}}}),
    ("json-path-list", "json_path", {"path": "items.0.name", "expected": "n"}, {"output": {"items": [{"name": "n"}]}}),
    ("json-path-missing", "json_path", {"path": "items.3", "expected": 1}, {"output": {"items": []}}),
    # substring / regex
    ("substring-found", "substring", {"needle": "ship"}, {"output": "it shipped"}),
    ("substring-case", "substring", {"needle": "SHIP"}, {"output": "it shipped"}),
    ("substring-nocase", "substring", {"needle": "SHIP", "case_sensitive": False}, {"output": "it shipped"}),
    ("substring-dict", "substring", {"needle": "shipped"}, {"output": {"status": "shipped"}}),
    ("substring-no-output", "substring", {"needle": "None"}, {}),
    ("regex-match", "regex", {"pattern": r"\d+"}, {"output": "order 42"}),
    ("regex-none", "regex", {"pattern": r"^x"}, {"output": "order 42"}),
    ("regex-flags", "regex", {"pattern": "^ORDER", "flags": 2}, {"output": "order 42"}),
    # fact_recall
    ("facts-all", "fact_recall", {"facts": [{"any_of": ["36mg", "36 mg"]}, {"any_of": ["Paris"]}]},
     {"output": "36 mg in paris"}),
    ("facts-half", "fact_recall", {"facts": [{"any_of": ["36mg"]}, {"any_of": ["Paris"], "case_sensitive": True}],
                                   "pass_threshold": 0.5}, {"output": "36MG in paris"}),
    ("facts-short", "fact_recall", {"facts": [{"any_of": ["a1"]}, {"any_of": ["b2"]}]}, {"output": "a1 only"}),
    ("facts-forbidden", "fact_recall", {"facts": [{"any_of": ["a1"]}], "forbidden": ["Aspirin"]},
     {"output": "a1 with aspirin"}),
    ("facts-forbidden-cs", "fact_recall", {"facts": [{"any_of": ["a1"]}], "forbidden": ["Aspirin"],
                                           "forbidden_case_sensitive": True}, {"output": "a1 with aspirin"}),
    ("facts-only-forbidden", "fact_recall", {"forbidden": ["secret"]}, {"output": "all clear"}),
    ("facts-dict-repr", "fact_recall", {"facts": [{"any_of": ["'status': 'done'"]}]}, {"output": {"status": "done"}}),
    ("facts-dict-output", "fact_recall", {"facts": [{"any_of": ["shipped"]}]}, {"output": {"status": "shipped"}}),
    ("facts-list-output", "fact_recall", {"facts": [{"any_of": ["42"]}]}, {"output": [42, 43]}),
    ("facts-int-output", "fact_recall", {"facts": [{"any_of": ["42"]}]}, {"output": 42}),
    ("facts-no-output", "fact_recall", {"facts": [{"any_of": ["None"]}]}, {}),
    # tool_called / tool_not_called / path_order
    ("called", "tool_called", {"tool_name": "lookup"}, {"tool_calls": [["lookup", {"id": 1}]]}),
    ("called-args", "tool_called", {"tool_name": "lookup", "with_args_subset": {"id": 1}},
     {"tool_calls": [["lookup", {"id": 1, "x": 2}]]}),
    ("called-args-wrong", "tool_called", {"tool_name": "lookup", "with_args_subset": {"id": 2}},
     {"tool_calls": [["lookup", {"id": 1}]]}),
    ("called-min-count", "tool_called", {"tool_name": "lookup", "min_count": 2}, {"tool_calls": [["lookup", {}]]}),
    ("called-none", "tool_called", {"tool_name": "lookup"}, {"tool_calls": []}),
    ("not-called", "tool_not_called", {"tool_name": "rm"}, {"tool_calls": [["ls", {}]]}),
    ("not-called-hit", "tool_not_called", {"tool_name": "rm"}, {"tool_calls": [["rm", {}]]}),
    ("not-called-empty", "tool_not_called", {"tool_name": "rm"}, {"tool_calls": []}),
    ("order-ok", "path_order", {"steps": ["a", "b"]}, {"tool_calls": [["a", {}], ["x", {}], ["b", {}]]}),
    ("order-reversed", "path_order", {"steps": ["a", "b", "c"]},
     {"tool_calls": [["c", {}], ["b", {}], ["a", {}]]}),
    ("order-partial", "path_order", {"steps": ["a", "b", "c"]}, {"tool_calls": [["a", {}], ["b", {}]]}),
    ("order-none", "path_order", {"steps": ["a", "b"]}, {"tool_calls": [["x", {}]]}),
    ("order-empty-steps", "path_order", {"steps": []}, {"tool_calls": [["x", {}]]}),
    ("order-contiguous", "path_order", {"steps": ["a", "b"], "contiguous": True},
     {"tool_calls": [["a", {}], ["b", {}]]}),
    ("order-contiguous-gap", "path_order", {"steps": ["a", "b"], "contiguous": True},
     {"tool_calls": [["a", {}], ["x", {}], ["b", {}]]}),
    # permissions
    ("perm-allowed", "permission_present", {"permission_key": "read"}, {"permissions": OPENCODE_BLOCK}),
    ("perm-denied", "permission_present", {"permission_key": "edit"}, {"permissions": OPENCODE_BLOCK}),
    ("perm-missing", "permission_present", {"permission_key": "write"}, {"permissions": OPENCODE_BLOCK}),
    ("perm-bool", "permission_present", {"permission_key": "webfetch"}, {"permissions": {"webfetch": True}}),
    ("perm-bash-allowed", "permission_present", {"permission_key": "bash", "bash_pattern": "git status"},
     {"permissions": OPENCODE_BLOCK}),
    ("perm-bash-absent-pattern", "permission_present", {"permission_key": "bash", "bash_pattern": "rm -rf *"},
     {"permissions": OPENCODE_BLOCK}),
    ("perm-bash-ask", "permission_present", {"permission_key": "bash", "bash_pattern": "ls *"},
     {"permissions": OPENCODE_BLOCK}),
    ("perm-none", "permission_present", {"permission_key": "read"}, {}),
    ("absent-denied", "permission_absent", {"permission_key": "edit"}, {"permissions": OPENCODE_BLOCK}),
    ("absent-missing", "permission_absent", {"permission_key": "write"}, {"permissions": OPENCODE_BLOCK}),
    ("absent-allowed", "permission_absent", {"permission_key": "read"}, {"permissions": OPENCODE_BLOCK}),
    ("absent-bash-denied", "permission_absent", {"permission_key": "bash", "bash_pattern": "rm -rf *"},
     {"permissions": {"bash": {"*": "allow", "rm -rf *": "deny"}}}),
    ("absent-bash-allowed", "permission_absent", {"permission_key": "bash", "bash_pattern": "git status"},
     {"permissions": OPENCODE_BLOCK}),
    ("absent-bash-no-bash", "permission_absent", {"permission_key": "bash", "bash_pattern": "rm -rf *"},
     {"permissions": {"read": "allow"}}),
    ("absent-none", "permission_absent", {"permission_key": "read"}, {}),
    ("absent-ask", "permission_absent", {"permission_key": "bash", "bash_pattern": "ls *"},
     {"permissions": OPENCODE_BLOCK}),
    ("present-bash-fallback", "permission_present", {"permission_key": "bash", "bash_pattern": "git log"},
     {"permissions": {"bash": {"*": "allow", "rm *": "deny"}}}),
    ("present-bash-key-all-denied", "permission_present", {"permission_key": "bash"},
     {"permissions": {"bash": {"*": "deny"}}}),
    ("present-bash-key-some-allowed", "permission_present", {"permission_key": "bash"},
     {"permissions": OPENCODE_BLOCK}),
    # llm_judge
    ("judge-pass", "llm_judge", {"criteria": "polite"}, {"output": "hi", "judge": {"score": 0.9, "reasoning": "ok"}}),
    ("judge-low", "llm_judge", {"criteria": "polite"}, {"output": "hi", "judge": {"score": 0.2, "reasoning": "no"}}),
    ("judge-veto", "llm_judge", {"criteria": "polite"}, {"output": "hi", "judge": {"score": 0.9, "pass": False}}),
    ("judge-threshold", "llm_judge", {"criteria": "polite", "pass_threshold": 0.95},
     {"output": "hi", "judge": {"score": 0.9}}),
    ("judge-none", "llm_judge", {"criteria": "polite"}, {"output": "hi"}),
]


class StubJudge:
    """Returns the case's verdict mapping, whatever it is asked."""

    def __init__(self, verdict: dict[str, Any]) -> None:
        self.verdict = verdict

    def judge(self, criteria: str, target: Any, *, model: str | None = None) -> dict[str, Any]:
        return dict(self.verdict)


EVALUATOR_CLASSES = {
    "equals": "EqualsEvaluator", "json_path": "JsonPathEvaluator", "substring": "SubstringEvaluator",
    "regex": "RegexEvaluator", "fact_recall": "FactRecallEvaluator", "tool_called": "ToolCalledEvaluator",
    "tool_not_called": "ToolNotCalledEvaluator", "path_order": "PathOrderEvaluator",
    "permission_present": "PermissionPresentEvaluator", "permission_absent": "PermissionAbsentEvaluator",
    "llm_judge": "LLMJudgeEvaluator",
}


def outcome(case: Case) -> dict[str, Any]:
    """The case's result under whichever `open_agent_compiler` is importable."""
    from open_agent_compiler.model.core import test_model
    from open_agent_compiler.testing.evaluation import RunContext, ToolCallRecord, evaluate

    _, kind, fields, run = case
    fields = dict(fields)
    if "facts" in fields:
        fields["facts"] = tuple(test_model.FactSpec(**fact) for fact in fields["facts"])
    evaluator = getattr(test_model, EVALUATOR_CLASSES[kind])(**fields)
    context = RunContext(
        output=run.get("output"),
        tool_calls=[ToolCallRecord(name=name, args=args) for name, args in run.get("tool_calls", [])],
        permissions=run.get("permissions"),
        judge=StubJudge(run["judge"]) if "judge" in run else None,
    )
    result = evaluate(evaluator, context)
    return {"passed": result.passed, "score": round(result.score, 4), "skipped": result.skipped,
            "details": sorted(result.details)}


def outcomes() -> dict[str, dict[str, Any]]:
    """Every case's outcome by id; a case that raises records the exception type."""
    found: dict[str, dict[str, Any]] = {}
    for case in CASES:
        try:
            found[case[0]] = outcome(case)
        except Exception as exc:  # noqa: BLE001 - the comparison reports it
            found[case[0]] = {"raised": type(exc).__name__}
    return found


if __name__ == "__main__":
    json.dump(outcomes(), sys.stdout, indent=1, sort_keys=True)
