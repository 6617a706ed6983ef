"""Choosing tests like pytest does: `-k EXPR` over ids, `-m EXPR` over tags, `--last-failed`, `--shard K/N`.

Expressions use pytest's grammar, parsed here (never `eval`):

    expr     := and_expr ("or" and_expr)*
    and_expr := not_expr ("and" not_expr)*
    not_expr := "not" not_expr | "(" expr ")" | IDENT

An expression is parsed once per run into a tree of closures; matching a test walks the tree (no regex per test).
`-k`: an IDENT matches when it is a case-insensitive substring of the test id. `-m`: when it equals one of the
test's tags. An empty expression matches everything.

Shards are a stable partition by a hash of the test id: a test's shard depends on its id and N only, so adding
tests moves no existing test. `--shard-by duration` balances agent tests that have a recorded duration over the
shards (longest first onto the lightest shard); every other test keeps its hash shard.
"""

import re
from collections.abc import Callable, Iterable, Mapping
from typing import TypeVar

import xxhash

from open_agent_compiler.errors import NothingSelected, OacError

_TOKEN = re.compile(r"\s*(?:(\()|(\))|([\w:+\-.\[\]\\/@#=]+))")
_WORDS = ("and", "or", "not")
MAX_DEPTH = 100  # nesting of "not" and "(": deeper is refused with one line (Python's stack is not a limit we show)
Matcher = Callable[[str, frozenset[str]], bool]  # (lowercased test id, tags) → selected
T = TypeVar("T")


class ExpressionError(OacError):
    """A -k / -m expression that does not parse."""


def _tokens(text: str, flag: str) -> list[str]:
    found: list[str] = []
    position = 0
    while position < len(text):
        if text[position:].strip() == "":
            break
        match = _TOKEN.match(text, position)
        if match is None or match.end() == position:
            raise ExpressionError(f"{flag} {text!r}: unexpected character {text[position:].lstrip()[:1]!r} at "
                                  f"column {position + 1}")
        found.append(match.group(1) or match.group(2) or match.group(3))
        position = match.end()
    return found


class _Parser:
    def __init__(self, text: str, flag: str, leaf: Callable[[str], Matcher]) -> None:
        self.text, self.flag, self.leaf = text, flag, leaf
        self.tokens = _tokens(text, flag)
        self.at = 0
        self.depth = 0

    def fail(self, what: str) -> ExpressionError:
        shown = self.text if len(self.text) <= 80 else self.text[:77] + "..."
        return ExpressionError(f"{self.flag} {shown!r}: {what}")

    def peek(self) -> str | None:
        return self.tokens[self.at] if self.at < len(self.tokens) else None

    def take(self) -> str | None:
        token = self.peek()
        self.at += 1
        return token

    def parse(self) -> Matcher:
        if not self.tokens:
            return lambda test_id, tags: True
        tree = self.expr()
        if self.peek() is not None:
            raise self.fail(f"unexpected {self.peek()!r} after a complete expression")
        return tree

    def expr(self) -> Matcher:
        terms = [self.and_expr()]
        while self.peek() == "or":
            self.take()
            terms.append(self.and_expr())
        if len(terms) == 1:
            return terms[0]
        return lambda test_id, tags: any(term(test_id, tags) for term in terms)

    def and_expr(self) -> Matcher:
        terms = [self.not_expr()]
        while self.peek() == "and":
            self.take()
            terms.append(self.not_expr())
        if len(terms) == 1:
            return terms[0]
        return lambda test_id, tags: all(term(test_id, tags) for term in terms)

    def not_expr(self) -> Matcher:
        token = self.take()
        if token is None:
            raise self.fail("ends where a name, 'not' or '(' was expected")
        if token in ("not", "("):
            self.depth += 1
            if self.depth > MAX_DEPTH:
                raise self.fail(f"nested deeper than {MAX_DEPTH} levels of 'not' and '('")
            try:
                return self._nested(token)
            finally:
                self.depth -= 1
        if token in (")", "and", "or"):
            raise self.fail(f"unexpected {token!r} where a name, 'not' or '(' was expected")
        return self.leaf(token)

    def _nested(self, token: str) -> Matcher:
        if token == "not":
            inner = self.not_expr()
            return lambda test_id, tags: not inner(test_id, tags)
        inner = self.expr()
        if self.take() != ")":
            raise self.fail("a '(' is not closed")
        return inner


def keyword_matcher(text: str) -> Matcher:
    """`-k`: each name is a case-insensitive substring of the test id (pass the id lowercased)."""
    def leaf(word: str) -> Matcher:
        lowered = word.lower()
        return lambda test_id, tags: lowered in test_id
    return _Parser(text, "-k", leaf).parse()


def marker_matcher(text: str) -> Matcher:
    """`-m`: each name is one of the test's tags."""
    def leaf(word: str) -> Matcher:
        return lambda test_id, tags: word in tags
    return _Parser(text, "-m", leaf).parse()


def parse_shard(text: str) -> tuple[int, int]:
    """'K/N' with 1 <= K <= N → (K, N)."""
    match = re.fullmatch(r"\s*(\d+)\s*/\s*(\d+)\s*", text)
    if not match or not 1 <= int(match.group(1)) <= int(match.group(2)):
        raise OacError(f"--shard {text!r}: expected K/N with 1 <= K <= N (e.g. 2/3)")
    return int(match.group(1)), int(match.group(2))


def hash_shard(test_id: str, shards: int) -> int:
    """The 1-based shard of a test by the hash of its id alone (stable whatever else the suite holds)."""
    return xxhash.xxh64_intdigest(test_id.encode("utf-8", "surrogatepass")) % shards + 1


def shard_of(test_ids: Iterable[str], shards: int, durations: Mapping[str, float] | None = None) -> dict[str, int]:
    """test id → 1-based shard. `durations` (agent test id → recorded seconds): those tests are placed longest
    first onto the shard with the least recorded time (ties: the lower shard), the rest by hash. Deterministic:
    every shard of a CI matrix computes the same partition from the same history."""
    placed = {test_id: hash_shard(test_id, shards) for test_id in test_ids}
    if durations:
        timed = sorted((t for t in placed if t in durations), key=lambda t: (-durations[t], t))
        loads = [0.0] * shards
        for test_id in timed:
            lightest = min(range(shards), key=lambda index: (loads[index], index))
            loads[lightest] += durations[test_id]
            placed[test_id] = lightest + 1
    return placed


def last_failed(history: Iterable[Mapping[str, object]], config: str) -> set[str]:
    """Ids of the tests whose latest record (of this config) in the history failed."""
    latest: dict[str, object] = {}
    for record in history:
        test_id = record.get("test_id")
        if not isinstance(test_id, str) or record.get("config") not in (config, None) or record.get("repeat"):
            continue
        latest[test_id] = record.get("status")
    return {test_id for test_id, status in latest.items() if status == "fail"}


def recorded_durations(history: Iterable[Mapping[str, object]], config: str) -> dict[str, float]:
    """Agent test id → duration of its latest record that ran (pass or fail) in this config."""
    found: dict[str, float] = {}
    for record in history:
        test_id, duration = record.get("test_id"), record.get("duration_s")
        if (record.get("test_kind") == "agent" and isinstance(test_id, str) and isinstance(duration, (int, float))
                and record.get("status") in ("pass", "fail") and record.get("config") in (config, None)):
            found[test_id] = float(duration)
    return found


def narrow(cases: list[T], *, keyword: str | None = None, markers: str | None = None,
           failed: set[str] | None = None, shard: tuple[int, int] | None = None,
           durations: Mapping[str, float] | None = None) -> tuple[list[T], list[str]]:
    """The cases `-k`, `-m`, `--last-failed` and `--shard` keep, in their order, and notes to show the user.

    `-k`/`-m` that keep nothing out of a non-empty set are an error (the user asked for something that is not
    there); an empty shard is not (a CI matrix may have more shards than tests); `--last-failed` with no recorded
    failure keeps every test, as pytest does."""
    notes: list[str] = []
    chosen = cases
    asked = [f"{flag} {text!r}" for flag, text in (("-k", keyword), ("-m", markers)) if text]
    if asked and chosen:
        by_id = keyword_matcher(keyword) if keyword else None
        by_tag = marker_matcher(markers) if markers else None
        kept = []
        for case in chosen:
            test_id, tags = case.test_id, frozenset(case.test.tags)  # type: ignore[attr-defined]
            if by_id is not None and not by_id(test_id.lower(), tags):
                continue
            if by_tag is not None and not by_tag(test_id, tags):
                continue
            kept.append(case)
        if not kept:
            raise NothingSelected(f"no tests selected ({' '.join(asked)} matched none of the {len(chosen)} tests)")
        chosen = kept
    if failed is not None:
        still = [case for case in chosen if case.test_id in failed]  # type: ignore[attr-defined]
        if still:
            chosen = still
        else:
            notes.append("--last-failed: no recorded failure among the selected tests; running them all")
    if shard is not None:
        index, count = shard
        placed = shard_of([case.test_id for case in chosen], count, durations)  # type: ignore[attr-defined]
        chosen = [case for case in chosen if placed[case.test_id] == index]  # type: ignore[attr-defined]
    return chosen, notes
