"""Turn user errors into one line on stderr and exit code 2."""

import functools
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
    return wrapper  # type: ignore[return-value]
