"""doit's dispatcher, with a task that waits for nothing given its turn without doit's dependency walk.

doit's `TaskDispatcher._add_task` is a generator (wrapped in a second one that drops `None`s) that walks a task's
loader, calc_dep, task_dep and setup tasks before it yields the task itself. A test of ours with no
`task_dep` (every mock-only test), no calc_dep, no setup tasks and no delayed loader goes through all of it to
yield itself once: two generator frames, two list copies and two empty `_node_add_wait_run` passes a test (1.7 %
of a warm 5,000-test run's instructions, 60 M of 3.56 G, cachegrind). For exactly those tasks the node's steps
are an iterator that yields the task once, which is what doit's generator yields for them; every other task
keeps doit's generator. Dispatch order, statuses, dependents and reporting are doit's.
"""

from collections.abc import Callable, Iterator
from operator import length_hint
from typing import Any

ONCE = type(iter(()))  # the type of a task's steps given here (a tuple's iterator)


def lean_add_task(task_dispatcher: Any) -> None:
    """Give `task_dispatcher` (doit's, before its run) the short path for tasks that wait for nothing."""
    walk: Callable[[Any], Iterator[Any]] = task_dispatcher._add_task

    def add_task(node: Any) -> Iterator[Any]:
        task = node.task
        if task.task_dep or task.calc_dep or task.setup_tasks or task.loader:
            return walk(node)
        return iter((task,))

    task_dispatcher._add_task = add_task


def spent_once(steps: Any) -> bool:
    """True when `steps` is a short path's iterator that has yielded its task."""
    return type(steps) is ONCE and length_hint(steps) == 0
