"""doit's plugin lookup, one scan of the installed distributions per run instead of one per plugin category.

doit finds its commands, backends and reporters in the entry points of every installed distribution
(`doit.plugin.PluginDict`), reading them anew for each category: three scans in a `oac test` run, ~10 ms each in
an environment of 38 distributions (more in a bigger one). Here one snapshot of the entry points answers every
category for the length of a run: the same entry points, so the same plugins.
"""

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from importlib.metadata import entry_points
from typing import Any

import doit.plugin


@contextmanager
def plugins_scanned_once() -> Iterator[None]:
    found: Any = None  # (3.11: the SelectableGroups of every entry point; 3.12: EntryPoints)

    def select(**params: Any) -> Any:
        nonlocal found
        if found is None:
            found = entry_points()
        return found.select(**params)

    def impl() -> Callable[..., Any]:
        return select

    original = doit.plugin.entry_points_impl
    doit.plugin.entry_points_impl = impl
    try:
        yield
    finally:
        doit.plugin.entry_points_impl = original
