"""A compiled agent artifact read back once per run, and each question a capability test asks of it decided once.

The read-back (the dialect's `capabilities`) is a pure function of the artifact's bytes, and the decision for
one question (a bash command, a permission key) a pure function of the read-back: both are memoised by the
artifact's key, which is its dialect, its agent and the xxh3-128 digest of every file it is read from. A changed
artifact is another key, so it can never be answered from a stale read-back.
"""

from collections.abc import Callable, Mapping
from typing import Any

from open_agent_compiler.compiler.dialects import get_dialect
from open_agent_compiler.model.core.capabilities import Capabilities
from open_agent_compiler.model.hashing import digest_bytes

Lookup = Callable[[Capabilities, str], tuple[str, str]]  # (capabilities, item) → (action, how)
ArtifactKey = tuple[str, str, tuple[tuple[str, str], ...]]  # dialect, agent, (path, digest of its bytes) per file

# Read-backs kept per process, the most recently used: a run's tests of one agent follow each other (discovery
# order), so a few suffice; holding one per tested agent to the end of a cold run was ~3.5 KB each (3.5 MB at
# 1,000 agents). A read-back let go is parsed again when asked, the same (a pure function of the bytes).
_LIMIT = 128


class ReadBack:
    """One artifact's `Capabilities` and the memo of its decisions, by (lookup, item)."""

    __slots__ = ("capabilities", "_decisions", "_target")

    def __init__(self, capabilities: Capabilities) -> None:
        self.capabilities = capabilities
        self._decisions: dict[tuple[Lookup, str], tuple[str, str]] = {}
        self._target: dict[str, Any] | None = None

    def target(self) -> dict[str, Any]:
        """The capabilities as JSON (an evaluator's target): dumped once per artifact, and each test gets its own
        copy (a user's evaluator may change what it is given). Its values are strings, or dicts and lists of
        strings, so a copy of each container is a deep copy."""
        if self._target is None:
            self._target = self.capabilities.model_dump(mode="json")
        return {key: value.copy() if isinstance(value, (dict, list)) else value for key, value in self._target.items()}

    def decide(self, lookup: Lookup, item: str) -> tuple[str, str]:
        """`lookup(capabilities, item)`, computed once per (lookup, item)."""
        key = (lookup, item)
        found = self._decisions.get(key)
        if found is None:
            found = self._decisions[key] = lookup(self.capabilities, item)
        return found


_READ_BACKS: dict[ArtifactKey, ReadBack] = {}


def artifact_key(dialect: str, agent: str, files: Mapping[str, bytes]) -> ArtifactKey:
    return dialect, agent, tuple(sorted((path, digest_bytes(data)) for path, data in files.items()))


def read_back(dialect: str, agent: str, files: Mapping[str, bytes]) -> ReadBack:
    """The read-back of `agent` from `files` (relative path → compiled bytes), parsed once per artifact key."""
    key = artifact_key(dialect, agent, files)
    found = _READ_BACKS.pop(key, None)
    if found is None:
        if len(_READ_BACKS) >= _LIMIT:
            del _READ_BACKS[next(iter(_READ_BACKS))]  # the least recently used
        found = ReadBack(get_dialect(dialect).capabilities(agent, files))
    _READ_BACKS[key] = found  # (re)inserted last: the most recently used
    return found
