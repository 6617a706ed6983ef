"""The one table of dialects. Adding a dialect = one module implementing `Dialect` and one line here."""

from open_agent_compiler.compiler.claude import CLAUDE
from open_agent_compiler.compiler.codex import CODEX
from open_agent_compiler.compiler.dialect import Dialect
from open_agent_compiler.compiler.opencode import OPENCODE
from open_agent_compiler.compiler.pi import PI
from open_agent_compiler.errors import UnknownDialect

DIALECTS: dict[str, Dialect] = {
    OPENCODE.name: OPENCODE,
    CLAUDE.name: CLAUDE,
    PI.name: PI,
    CODEX.name: CODEX,
}

DEFAULT_DIALECT = OPENCODE.name


def get_dialect(name: str) -> Dialect:
    try:
        return DIALECTS[name]
    except KeyError:
        raise UnknownDialect(f"unknown dialect {name!r}; known: {', '.join(DIALECTS)}") from None
