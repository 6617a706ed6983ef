"""Fewer garbage-collector passes during a run.

Building a registry allocates hundreds of thousands of small, long-lived, acyclic objects (pydantic models).
With the default thresholds the collector traversed them again and again: ~40 % of a warm run at 5,000 tests,
and at 50,000 tests the middle generation alone took 0.7 s of a 3.5 s warm run. During a run only the youngest
generation is collected, in batches of 50,000 allocations; objects that survive one collection stay put (a
cycle that outlives a batch waits for the collections after the run; measured: +3 % peak RSS in a cold
50,000-test run).

Planning (registry, discovery, compile in memory, keys, doit's tasks) builds what the run keeps and next to no
garbage (5 passes of the youngest generation at 5,000 tests found 46 unreachable objects in all), yet each of
those objects was traversed once by a collection: ~0.2 s of a warm 5,000-test run. With `defer=True` nothing is
collected until a task executes in this process (`executing`, called by our doit runners): then everything that
exists is frozen (`gc.freeze`: moved aside in one step, never traversed again) and collections go on as above
for what the tests allocate. A run whose tests are all green never collects.
"""

import gc
from collections.abc import Iterator
from contextlib import contextmanager

RUN_THRESHOLDS = (50_000, 1_000_000, 1_000_000)

_deferred = False  # collection is off until a task executes (see `executing`); inherited by forked workers


@contextmanager
def fewer_collections(*, restore: bool = True, defer: bool = False) -> Iterator[None]:
    """`restore=False` when the process ends right after: restoring the defaults would trigger a full
    collection over everything the run allocated (~20 ms at 5,000 tests) just before exit. `defer`: no collection
    at all until a task executes (`executing`)."""
    global _deferred
    previous = gc.get_threshold()
    deferring = defer and gc.isenabled()
    # (get_freeze_count walks every frozen object: only asked when the state is restored)
    frozen_before = gc.get_freeze_count() if restore and deferring else 0
    gc.set_threshold(*RUN_THRESHOLDS)
    if deferring:
        gc.disable()
        _deferred = True
    try:
        yield
    finally:
        if deferring:
            executing()  # (nothing executed: done now, so the process collects again from here)
            if restore and not frozen_before:
                gc.unfreeze()  # the run's objects, its plan included, may be collected again
        if restore:
            gc.set_threshold(*previous)


def executing() -> None:
    """A task is about to execute in this process: collections resume over what is allocated from here on."""
    global _deferred
    if _deferred:
        _deferred = False
        gc.freeze()
        gc.enable()
