"""`oac test --repeat N`: the N runs of a test (each its own doit task, never green-skipped) folded into one
verdict: pass (every run passed), fail (every run that ran failed), or FLAKY (both), with pass@k and pass^k.

pass@k is the chance that at least one of k runs passes, pass^k that all k pass; from n runs with c passes the
unbiased estimates are 1 - C(n-c, k)/C(n, k) and C(c, k)/C(n, k), recorded for k = 1..n.
"""

from math import comb
from typing import Any

from open_agent_compiler.history.log import TestOutcome


def pass_at_k(runs: int, passes: int) -> dict[str, float]:
    return {str(k): round(1 - comb(runs - passes, k) / comb(runs, k), 6) for k in range(1, runs + 1)}


def pass_hat_k(runs: int, passes: int) -> dict[str, float]:
    return {str(k): round(comb(passes, k) / comb(runs, k), 6) for k in range(1, runs + 1)}


class Repeats:
    """Collects the outcomes of each test's repeats; `add` returns the verdict once the last one arrived."""

    def __init__(self, count: int, flaky_as: str) -> None:
        self.count = count
        self.flaky_as = flaky_as
        self._seen: dict[str, list[TestOutcome]] = {}

    def add(self, test_id: str, outcome: TestOutcome) -> tuple[TestOutcome, dict[str, Any], bool] | None:
        """(verdict outcome, the `repeats` summary for its record, flaky) after the N-th outcome, else None."""
        seen = self._seen.setdefault(test_id, [])
        seen.append(outcome)
        if len(seen) < self.count:
            return None
        del self._seen[test_id]
        return verdict(seen, self.flaky_as)


def verdict(outcomes: list[TestOutcome], flaky_as: str) -> tuple[TestOutcome, dict[str, Any], bool]:
    ran = [o for o in outcomes if o.status in ("pass", "fail")]
    passes = sum(o.status == "pass" for o in ran)
    failures = len(ran) - passes
    duration = sum(o.duration_s for o in outcomes)
    summary: dict[str, Any] = {"runs": len(ran), "passes": passes,
                               "pass_rate": round(passes / len(ran), 6) if ran else None}
    if ran:
        summary["pass_at_k"] = pass_at_k(len(ran), passes)
        summary["pass_hat_k"] = pass_hat_k(len(ran), passes)
    flaky = bool(passes and failures)
    if not ran:  # every run skipped or not runnable: the first says why
        return outcomes[0].model_copy(update={"duration_s": duration}), summary, False
    if flaky:
        status = flaky_as
        first_fail = next(o for o in ran if o.status == "fail")
        reason = (f"flaky: {passes}/{len(ran)} runs passed (pass@{len(ran)}="
                  f"{summary['pass_at_k'][str(len(ran))]:.2f}, pass^{len(ran)}="
                  f"{summary['pass_hat_k'][str(len(ran))]:.2f}); a failing run: {first_fail.first_failure()}")
        return (TestOutcome(status=status, score=passes / len(ran), evidence=first_fail.evidence,
                            skip_reason=reason, duration_s=duration), summary, True)
    chosen = ran[0] if not failures else next(o for o in ran if o.status == "fail")
    return chosen.model_copy(update={"duration_s": duration}), summary, False
