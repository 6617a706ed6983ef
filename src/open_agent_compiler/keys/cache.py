"""Test keys carried over from the last run for agents whose inputs did not change.

A test's key (see `keys`) is a function of its definition, its tool, the mock entries it can reach, the files
it runs, the compiled artifact's digest, the model, the dialect and the variant. Everything but the files lies in
one agent's resolved content, that agent's artifact digest and the mock profiles its tests name: their digest
is the agent's *scope*. While a scope is unchanged, so are the keys of the tests found through that agent, and a
warm run looks them up instead of serializing every test again. Tests whose key covers files (real handlers,
callable mocks) are always keyed afresh: a file can change, or a module search find another file, while no
definition changes. The scope also covers the source of the code that computes keys.
"""

from collections.abc import Callable, Collection, Mapping, Sequence

from open_agent_compiler.model.hashing import digest, digest_model_json, source_fingerprint
from open_agent_compiler.model.registry import ResolvedConfig
from open_agent_compiler.testing.discovery import TestCase
from open_agent_compiler.keys.key import JUDGING_CODE, KeyParts


class KeyCache:
    """scope digest → {test id → key}. Remembers what this run used, so entries of gone scopes are dropped."""

    def __init__(self, entries: Mapping[str, Mapping[str, str]] | None = None) -> None:
        self.entries = {scope: dict(keys) for scope, keys in (entries or {}).items()}
        self.kept: dict[str, dict[str, str]] = {}
        self.scope_of: dict[str, str] = {}  # test id → the scope its key is kept under

    @property
    def changed(self) -> bool:
        return self.kept != self.entries

    def keys(self, cases: Sequence[TestCase], resolved: ResolvedConfig, artifact_digests: Mapping[str, str],
             dialect: str, variant: object, parts_of: Callable[[str], KeyParts],
             pinned: Collection[str] = (), invoker: str | None = None, judge: str | None = None) -> dict[str, str]:
        """test id → key for `cases` (discovered from `resolved`): looked up where the agent a test was found
        through kept its scope, else `parts_of(test_id).key()`. `variant`: every run setting that is part of
        every key (variant, hermetic mode). `pinned`: tests always keyed afresh (they have discovered
        dependencies: files). Remembers what to keep for the next run."""
        by_agent: dict[str, list[TestCase]] = {}
        for case in cases:
            by_agent.setdefault(case.found_in, []).append(case)
        profiles: dict[str, str] = {}
        keys: dict[str, str] = {}
        for agent in resolved.agents:
            found = by_agent.get(agent.slot, [])
            if not found:
                continue
            names = {name for case in found if (name := case.mock_profile)}
            for name in names:
                if name not in profiles:  # (`names - profiles.keys()` would copy every key, once per agent)
                    profiles[name] = digest_model_json(resolved.mock_profiles[name])  # (tagged: see hashing)
            scope = digest([source_fingerprint(*JUDGING_CODE), agent.content_digest(),
                            artifact_digests.get(agent.compiled_name), sorted((n, profiles[n]) for n in names),
                            dialect, variant, invoker, judge])
            known = self.entries.get(scope, {})
            kept: dict[str, str] = {}
            scope_of = self.scope_of
            for case in found:
                test_id = case.test_id  # (read once: a pydantic model's attribute is a slow read in 3.11)
                key = known.get(test_id) if test_id not in pinned else None
                if key is None:
                    parts = parts_of(test_id)
                    key = parts.key()
                    if parts.files or parts.factory:  # keyed afresh every run (a judged test: no files)
                        keys[test_id] = key
                        continue
                keys[test_id] = kept[test_id] = key
                scope_of[test_id] = scope
            self.kept[scope] = kept
        return keys
