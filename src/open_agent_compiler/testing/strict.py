"""`--strict`: a test that could not run, or ran and checked nothing, fails instead of staying quiet."""

from open_agent_compiler.model.core.evaluator import EvaluatorResult
from open_agent_compiler.history.log import TestOutcome

UNVERIFIED = ("not_runnable", "skipped")


def strictly(outcome: TestOutcome) -> TestOutcome:
    """The outcome under --strict: not_runnable and skipped (nothing checked) become a FAIL saying why."""
    if outcome.status not in UNVERIFIED:
        return outcome
    why = " ".join((outcome.skip_reason or outcome.status).split())
    failure = EvaluatorResult(evaluator_kind="strict", name="strict", passed=False, score=0.0,
                              evidence=f"test is {outcome.status}: {why}")
    return outcome.model_copy(update={"status": "fail", "score": 0.0, "evidence": (*outcome.evidence, failure)})


def nothing_verified(passed: int, failed: int, skipped: int, not_runnable: int) -> str | None:
    """Why a run checked nothing at all although tests were selected (every one not runnable), else None."""
    if not_runnable and not (passed or failed or skipped):
        return (f"none of the {not_runnable} selected tests could run (all not_runnable): nothing was checked; "
                f"select runnable tests, or use --strict to fail them")
    return None
