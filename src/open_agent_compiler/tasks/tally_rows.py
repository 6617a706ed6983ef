"""A run's per-test rows (test id, name, status, seconds, message), held compactly for the summary, `--junit`,
`--durations` and the pytest plugin.

As a list of tuples a row took ~112 bytes (the tuple, its float, the list's slot), all held to the end of the run,
where the peak RSS of a cold run is (issue 18). Here a row is two references (the id and name the plan already
holds), a status code, a double, and a message only when it has one: ~26 bytes. Read back, rows are the same
tuples, in the same order.
"""

from array import array
from collections.abc import Iterator, Sequence
from typing import overload

Row = tuple[str, str, str, float, str]


class TallyRows(Sequence[Row]):
    __slots__ = ("_ids", "_names", "_codes", "_statuses", "_durations", "_messages")

    def __init__(self) -> None:
        self._ids: list[str] = []
        self._names: list[str] = []
        self._codes = array("H")  # index into `_statuses`
        self._statuses: list[str] = []  # each status text once, in the order first seen
        self._durations = array("d")
        self._messages: dict[int, str] = {}  # row index → its message, when not ""

    def append(self, row: Row) -> None:
        test_id, name, status, duration, message = row
        try:
            code = self._statuses.index(status)
        except ValueError:
            code = len(self._statuses)
            self._statuses.append(status)
        self._codes.append(code)
        self._durations.append(duration)
        if message:
            self._messages[len(self._ids)] = message
        self._ids.append(test_id)
        self._names.append(name)

    def __len__(self) -> int:
        return len(self._ids)

    def _row(self, index: int) -> Row:
        return (self._ids[index], self._names[index], self._statuses[self._codes[index]], self._durations[index],
                self._messages.get(index, ""))

    @overload
    def __getitem__(self, index: int) -> Row: ...

    @overload
    def __getitem__(self, index: slice) -> list[Row]: ...

    def __getitem__(self, index: int | slice) -> Row | list[Row]:
        if isinstance(index, slice):
            return [self._row(i) for i in range(*index.indices(len(self)))]
        if index < 0:
            index += len(self)
        if not 0 <= index < len(self):
            raise IndexError("row index out of range")
        return self._row(index)

    def __iter__(self) -> Iterator[Row]:
        return (self._row(i) for i in range(len(self)))
