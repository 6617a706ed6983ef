"""The package re-exports its public names lazily (PEP 562, issue 18): every name resolves, `dir()` lists it, and
importing the package or one model does not import the evaluators, the artifact loader or the compiler."""

import subprocess
import sys

import open_agent_compiler


def test_every_public_name_resolves_and_is_listed() -> None:
    assert len(open_agent_compiler.__all__) == 90  # + OptimisationCriterion (issue 34)
    listed = dir(open_agent_compiler)
    for name in open_agent_compiler.__all__:
        assert getattr(open_agent_compiler, name) is not None, name
        assert name in listed, name
    namespace: dict[str, object] = {}
    exec("from open_agent_compiler import *", namespace)
    assert set(open_agent_compiler.__all__) <= set(namespace)


def test_unknown_name_is_an_attribute_error() -> None:
    try:
        open_agent_compiler.NoSuchThing  # noqa: B018
    except AttributeError as error:
        assert "NoSuchThing" in str(error)
    else:
        raise AssertionError("an unknown name resolved")


def _fresh(code: str) -> str:
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return done.stdout.strip()


def test_importing_a_model_imports_only_what_it_needs() -> None:
    loaded = _fresh("import sys\nfrom open_agent_compiler import AgentDefinition\n"
                    "print(sorted(m for m in sys.modules if m.startswith('open_agent_compiler.')))")
    for absent in ("open_agent_compiler.testing.evaluation", "open_agent_compiler.testing.artifacts",
                   "open_agent_compiler.compiler.dialects", "open_agent_compiler.compiler.script"):
        assert absent not in loaded, absent


def test_an_evaluator_given_as_a_dict_resolves_before_any_evaluator_class_was_imported() -> None:
    kind = _fresh("from open_agent_compiler import Evaluator\n"
                  "print(type(Evaluator.model_validate({'kind': 'equals', 'expected': 1})).__name__)")
    assert kind == "EqualsEvaluator"


def test_an_evaluator_imports_its_own_module_only() -> None:
    loaded = _fresh("import sys\nfrom open_agent_compiler import EqualsEvaluator, PermissionAbsentEvaluator\n"
                    "print(sorted(m for m in sys.modules if m.startswith('open_agent_compiler.')))")
    assert "open_agent_compiler.testing.evaluators.equals" in loaded
    for absent in ("open_agent_compiler.testing.evaluation", "open_agent_compiler.testing.run_context",
                   "open_agent_compiler.testing.evaluators.regex", "open_agent_compiler.testing.evaluators.llm_judge"):
        assert absent not in loaded, absent


def test_a_dict_of_a_kind_not_yet_imported_resolves_and_an_unknown_kind_lists_every_kind() -> None:
    found = _fresh("from open_agent_compiler import EqualsEvaluator, Evaluator\n"
                   "print(type(Evaluator.model_validate({'kind': 'regex', 'pattern': 'a'})).__name__)")
    assert found == "RegexEvaluator"
    for kind in ("'nope'", "3"):
        error = _fresh("from open_agent_compiler import EqualsEvaluator, Evaluator\n"
                       f"try:\n    Evaluator.model_validate({{'kind': {kind}}})\n"
                       "except ValueError as e:\n    print(e)")
        assert "'fact_recall'" in error and "'tool_not_called'" in error, error
