"""Failures as GitHub Actions annotations (`::error title=…::…` lines) when `GITHUB_ACTIONS=true`, so a CI run's
failed tests show on the run's summary page, one per test, on the line that defines the test where it is known
(`file=`, `line=`: the pull request's diff shows it there)."""

import os
from typing import Any, TextIO


def _escape(text: str, *, property_: bool = False) -> str:
    """GitHub's workflow-command escaping: % CR LF in data; also : and , in a property."""
    text = text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    return text.replace(":", "%3A").replace(",", "%2C") if property_ else text


def annotate(tally: Any, out: TextIO) -> None:
    if os.environ.get("GITHUB_ACTIONS") != "true":
        return
    where: dict[str, tuple[str, int]] = getattr(tally, "where", {})
    for test_id, message in tally.failures:
        place = where.get(test_id)  # the test's definition: GitHub attaches the annotation to that line
        at = f"file={_escape(place[0], property_=True)},line={place[1]}," if place else ""
        out.write(f"::error {at}title={_escape('oac test ' + test_id, property_=True)}::"
                  f"{_escape(test_id + ': ' + message[:2000])}\n")
    out.flush()
