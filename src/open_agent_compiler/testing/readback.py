"""A compiled agent artifact read back once per run, and each question a capability test asks of it decided once.

The read-back (the dialect's `capabilities`) is a pure function of the artifact's bytes, and the decision for
one question (a bash command, a permission key) a pure function of the read-back: both are memoised by the
artifact's key, which is its dialect, its agent and the xxh3-128 digest of every file it is read from. A changed
artifact is another key, so it can never be answered from a stale read-back.
"""

from collections.abc import Callable, Mapping

from open_agent_compiler.compiler.dialects import get_dialect
from open_agent_compiler.model.core.capabilities import Capabilities
from open_agent_compiler.model.hashing import digest_bytes

Lookup = Callable[[Capabilities, str], tuple[str, str]]  # (capabilities, item) → (action, how)
ArtifactKey = tuple[str, str, tuple[tuple[str, str], ...]]  # dialect, agent, (path, digest of its bytes) per file

_LIMIT = 4096  # read-backs kept per process (a run holds one per tested agent): a long process stays small


class ReadBack:
    """One artifact's `Capabilities` and the memo of its decisions, by (lookup, item)."""

    __slots__ = ("capabilities", "_decisions")

    def __init__(self, capabilities: Capabilities) -> None:
        self.capabilities = capabilities
        self._decisions: dict[tuple[Lookup, str], tuple[str, str]] = {}

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
    found = _READ_BACKS.get(key)
    if found is None:
        if len(_READ_BACKS) >= _LIMIT:
            _READ_BACKS.clear()
        found = _READ_BACKS[key] = ReadBack(get_dialect(dialect).capabilities(agent, files))
    return found
