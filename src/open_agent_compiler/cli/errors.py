"""Turn user errors into one line on stderr and exit code 2."""

import functools
import sqlite3
import sys
from collections.abc import Callable
from typing import Any, TypeVar

from open_agent_compiler.errors import OacError

F = TypeVar("F", bound=Callable[..., Any])


def one_line_errors(func: F) -> F:
    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except OacError as exc:
            print(f"oac: {' '.join(str(exc).split())}", file=sys.stderr)
            sys.exit(exc.exit_code)
        except UnicodeEncodeError as exc:  # a lone surrogate somewhere in a definition: show where it sits
            snippet = exc.object[max(0, exc.start - 30):exc.end + 30].encode("utf-8", "backslashreplace").decode()
            print(f"oac: text that is not valid Unicode (a lone surrogate) near {snippet!r}", file=sys.stderr)
            sys.exit(2)
        except (OSError, sqlite3.Error) as exc:  # the environment (a full disk, a path oac cannot use): name it
            # imported here: state_paths imports doit (~0.1 s), which `oac results`/`report` never need
            from open_agent_compiler.tasks.state_paths import describe, state_error

            named = getattr(exc, "filename", None) or getattr(exc, "filename2", None)
            text = str(state_error(named, exc)) if named else f"{type(exc).__name__}: {describe(exc)}"
            print(f"oac: {text}", file=sys.stderr)
            sys.exit(2)
    return wrapper  # type: ignore[return-value]
