"""A memo of rendered agent files, so an unchanged agent is not rendered again (YAML emitting dominates compile).

Keys cover everything an agent's file is derived from (the dialect passes its render input: the resolved agent
and its subagents' descriptions) plus the dialect and a fingerprint of the compiler's and the model's source, so
changed code never serves old bytes. The caller owns persistence.
"""

from collections.abc import Callable

from open_agent_compiler.model.hashing import digest, source_fingerprint


class RenderMemo:
    """Rendered bytes by key; remembers which keys this run used so stale entries can be dropped."""

    def __init__(self, entries: dict[str, bytes] | None = None) -> None:
        self.entries = dict(entries or {})
        self.used: set[str] = set()
        self.added = 0

    def render(self, dialect: str, render_input: object, render: Callable[[], bytes]) -> bytes:
        # the compiler's and the model's source (rendering reads model properties too): editing either
        # invalidates every entry
        key = digest([source_fingerprint("compiler", "model"), dialect, render_input])
        self.used.add(key)
        content = self.entries.get(key)
        if content is None:
            content = self.entries[key] = render()
            self.added += 1
        return content

    def live_entries(self) -> dict[str, bytes]:
        return {key: self.entries[key] for key in self.used}

    @property
    def changed(self) -> bool:
        return self.added > 0 or len(self.used) != len(self.entries)
