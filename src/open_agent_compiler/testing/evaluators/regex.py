"""`regex`: `re.search(pattern, text)` finds a match in the target's text (non-strings as sorted-key JSON)."""

import re
from typing import Any, Literal

from pydantic import Field, field_validator, model_validator

from open_agent_compiler.model.core.evaluator import EvaluationContext, Evaluator, EvaluatorResult
from open_agent_compiler.testing.evaluators._show import NO_TARGET, search_text, show

RegexFlag = Literal["IGNORECASE", "MULTILINE", "DOTALL", "VERBOSE", "ASCII"]


class RegexEvaluator(Evaluator):
    """`flags` is an int of `re` flags (`re.I | re.M`); a list of flag names ("IGNORECASE", ...) is accepted too.
    An invalid pattern is rejected when the evaluator is defined.

    Skips when there is no target (`None`).
    """

    kind: Literal["regex"] = "regex"
    pattern: str = Field(min_length=1)
    flags: int = 0

    @field_validator("flags", mode="before")
    @classmethod
    def _flag_names(cls, value: Any) -> Any:
        if isinstance(value, (list, tuple)):
            known = RegexFlag.__args__
            combined = 0
            for name in value:
                if name not in known:
                    raise ValueError(f"unknown regex flag {name!r}; known: {', '.join(known)}")
                combined |= int(getattr(re, name))
            return combined
        return int(value) if isinstance(value, re.RegexFlag) else value

    @model_validator(mode="after")
    def _compiles(self) -> "RegexEvaluator":
        try:
            self.compiled()
        except re.error as exc:
            raise ValueError(f"regex {self.pattern!r} does not compile: {exc}") from exc
        return self

    def compiled(self) -> re.Pattern[str]:
        return re.compile(self.pattern, self.flags)

    def evaluate(self, context: EvaluationContext) -> EvaluatorResult:
        if context.target is None:
            return self.skip(NO_TARGET)
        text = search_text(context.target)
        match = self.compiled().search(text)
        if match is None:
            return self.result(False, f"pattern {show(self.pattern)} has no match in {show(text)}",
                               details={"match_span": None})
        return self.result(True, f"pattern {show(self.pattern)} matched {show(match.group(0))} at {match.start()}",
                           details={"match_span": match.span()})
