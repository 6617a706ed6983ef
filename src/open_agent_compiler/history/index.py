"""The history index: the state of the history's one pass (`HistoryFold`) over the results log up to a byte offset,
kept in oac's state directory, so a repeat `oac results` / `oac report` scans only the lines appended since.

The log is append-only; the index is trusted only for the very bytes it was made from. Before use it must name
the same results path, the same file (device and inode of the file read), an offset at the end of a line within
the file, and the xxh3-128 digest of every byte before that offset. Anything else (a truncated, rotated or
rewritten log, a file put in its place with the same size, an index of another log, a corrupt or foreign index
file, another Python) and it is rebuilt from the whole log. Only complete lines are indexed: a torn last line (a
writer mid-append, a crashed one) is read from the log every time until it ends. What the views show is the same
with and without it, warnings included (those about skipped lines before the offset are kept and repeated).

Where: `<project>/.oac/results-index/<xxh3-64 of the log's absolute path>.idx`, in the `.oac` that holds the log,
or in the project's `.oac` the caller names (a `[tool.oac] results` path elsewhere). A log outside any `.oac` given
with `--results` gets no index: oac writes nothing next to a file it does not own. Written atomically through
`fsio` (never through a symlink); when it cannot be written (a read-only checkout) the view works without it.

Stored with `marshal` (fast to load, no code run on load) behind a digest of the stored bytes, so a damaged file
is never handed to it. Imports no pydantic or doit: `oac results` stays cheap to start.
"""

import marshal
import os
import sys
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import xxhash

from open_agent_compiler import fsio
from open_agent_compiler.errors import OacError, ResultsError
from open_agent_compiler.history.views import History, HistoryFold, build_history
from open_agent_compiler.history.scan import Scanned, scan, warning

INDEX_DIR = "results-index"
_MAGIC = b"oac-results-index 3\n"  # 3: a run keeps where its first line is
# marshal's format is the interpreter's: an index written by another Python is rebuilt, not misread
_PYTHON = f"{sys.implementation.cache_tag} marshal {marshal.version}"
_DIGEST = 16
MARK_EVERY = 1000  # records between two marks for --since


@dataclass(frozen=True)
class IndexPlace:
    """Where the index of one log lives: `root/rel`, `root` the project holding the `.oac` it is in."""

    root: Path
    rel: str


def index_place(results: Path, state_dir: Path | None = None) -> IndexPlace | None:
    """The index of `results` in the `.oac` holding it, else in `state_dir` (a project's `.oac`), else none."""
    absolute = os.path.abspath(results)
    name = f"{xxhash.xxh3_64_hexdigest(os.fsencode(absolute))}.idx"
    parts = Path(absolute).parts
    for index in range(len(parts) - 2, 0, -1):
        if parts[index] == fsio.STATE_DIR:
            return IndexPlace(Path(*parts[:index]), f"{fsio.STATE_DIR}/{INDEX_DIR}/{name}")
    if state_dir is None:
        return None
    state = Path(os.path.abspath(state_dir))
    return IndexPlace(state.parent, f"{state.name}/{INDEX_DIR}/{name}")


@dataclass
class _Index:
    offset: int  # bytes of the log it covers: whole lines
    line: int  # the number of the line starting at `offset`
    skipped: list[tuple[int, str]]  # the lines before `offset` the scan warned about
    fold: HistoryFold
    # for --since: every MARK_EVERY records, (where the record's line starts, its number, the latest timestamp of
    # the records before it, ISO, or None); the latest so far, the records counted, whether a timestamp without an
    # offset was seen (its moment depends on the reader's time zone: the marks are then not used)
    marks: list[tuple[int, int, str | None]] = field(default_factory=list)
    latest: str | None = None
    records: int = 0
    naive: bool = False


_CHUNK = 1 << 20


class _Changed(Exception):
    """The log shrank while being read: read it again, whole."""


def _pread(fd: int, size: int, offset: int) -> bytes:
    raw = os.pread(fd, size, offset)
    if len(raw) != size:
        raise _Changed
    return raw


def _digest_of_head(fd: int, offset: int) -> Any:
    """xxh3-128 of the log's first `offset` bytes, read in chunks into one buffer (no copy of the whole log)."""
    hasher = xxhash.xxh3_128()
    buffer = bytearray(min(_CHUNK, offset))
    view = memoryview(buffer)
    position = 0
    while position < offset:
        got = os.preadv(fd, [view[:min(_CHUNK, offset - position)]], position)
        if got <= 0:
            raise _Changed
        hasher.update(view[:got])
        position += got
    return hasher


class _Lines:
    """The log's bytes as `HistoryFold.history` slices them (`source[start:end]`, whole lines): before `offset`
    read from the file line by line, from `offset` on out of `tail`, read once."""

    def __init__(self, fd: int, offset: int, tail: bytes) -> None:
        self.fd, self.offset, self.tail = fd, offset, tail

    def __getitem__(self, where: slice) -> bytes:
        start, end = where.start, where.stop
        if start >= self.offset:
            return self.tail[start - self.offset:end - self.offset]
        return _pread(self.fd, end - start, start)


def _read(place: IndexPlace, results: str, fd: int, status: os.stat_result) -> tuple[_Index, Any] | None:
    """The index of the log open as `fd` (at `results`, `status` its fstat), with the digest state of the bytes it
    covers; None when there is none to trust."""
    try:
        entry = fsio.inspect(place.root, place.rel, show=place.rel)
    except OacError:  # unreadable, or a symlinked directory on the way: as if there were none
        return None
    raw = entry.data
    if entry.kind != "file" or raw is None or not raw.startswith(_MAGIC):
        return None
    body = memoryview(raw)[len(_MAGIC) + _DIGEST:]
    if xxhash.xxh3_128_digest(body) != raw[len(_MAGIC):len(_MAGIC) + _DIGEST]:
        return None  # damaged (or not ours): never handed to marshal
    try:
        python, path, device, inode, offset, digest, line, skipped, state, marks = marshal.loads(body)
        if (python, path, device, inode) != (_PYTHON, results, status.st_dev, status.st_ino):
            return None
        if not (0 < offset <= status.st_size and _pread(fd, 1, offset - 1) == b"\n"):
            return None  # truncated since, or not at the end of a line
        hasher = _digest_of_head(fd, offset)
        if hasher.digest() != digest:
            return None  # rewritten or replaced since
        found = _Index(offset, line, list(skipped), HistoryFold.restore(state), *marks)
        found.marks = list(found.marks)
        return found, hasher
    except (ValueError, TypeError, EOFError, KeyError, IndexError, _Changed):
        return None


def _encode(results: str, status: os.stat_result, digest: bytes, index: _Index) -> bytes:
    body = marshal.dumps((_PYTHON, results, status.st_dev, status.st_ino, index.offset, digest, index.line,
                          index.skipped, index.fold.dump(),
                          (index.marks, index.latest, index.records, index.naive)))
    return _MAGIC + xxhash.xxh3_128_digest(body) + body


def _write(place: IndexPlace, payload: bytes) -> None:
    try:
        fsio.write_file(place.root, place.rel, payload, durable=False, show=place.rel)
    except OacError:  # read-only, full, or something not ours in the way: the view works without it
        pass


def _shifted(records: Iterable[Scanned], by: int) -> Iterator[Scanned]:
    for stamp, run_id, test_id, status, duration, key, start, end in records:
        yield stamp, run_id, test_id, status, duration, key, start + by, end + by


def _marked(records: Iterable[Scanned], index: _Index, tail: bytes) -> Iterator[Scanned]:
    """`records` (of `tail`, the log from `index.offset` on), noting the marks `--since` starts from."""
    latest = None if index.latest is None else datetime.fromisoformat(index.latest)
    counted_at, counted_line = 0, index.line  # a line number, counted only at the marks
    count = index.records
    for record in records:
        if count % MARK_EVERY == 0:
            start = record[6]
            counted_line += tail.count(b"\n", counted_at, start)
            counted_at = start
            index.marks.append((index.offset + start, counted_line, None if latest is None else latest.isoformat()))
        count += 1
        try:
            moment = datetime.fromisoformat(record[0].decode("utf-8", "replace"))
        except ValueError:
            moment = None  # never shown by --since: it cannot hide a later record
        if moment is not None:
            if moment.tzinfo is None:
                index.naive = True
            elif latest is None or moment > latest:
                latest = moment
        yield record
    index.records = count
    index.latest = None if latest is None else latest.isoformat()


def _since(path: Path, fd: int, index: _Index, since: datetime, say: Callable[[str], None]) -> History:
    """The history from `since` on: the log is scanned from the last mark before which every record is older
    than `since` (those would be left out anyway); warnings about the lines skipped are repeated."""
    start, line = 0, 1
    for offset, number, latest in index.marks:
        if latest is not None and datetime.fromisoformat(latest) >= since:
            break
        start, line = offset, number
    for number, what in index.skipped:
        if number < line:
            say(warning(path, number, what))
    with open(fd, "rb", closefd=False) as handle:
        handle.seek(start)
        tail = handle.read()
    records = scan(tail, path, say, line=line)
    if start == 0:
        return build_history(path, tail, records, since)
    return build_history(path, _Lines(fd, start, tail), _shifted(records, start), since)


def load_indexed(path: Path, place: IndexPlace, warn: Callable[[str], None] | None = None,
                 since: datetime | None = None) -> History:
    """The history of `path` (what `history.load_history` gives), through and updating its index at `place`.
    With `since`, only the records from then on, the index used (not updated) to skip the older part."""
    say = warn or (lambda message: print(message, file=sys.stderr))
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except FileNotFoundError:
        raise OacError(f"no results file at {path}: run `oac test` first, or pass --results") from None
    except OSError as exc:
        raise ResultsError(f"cannot read results file {path}: {exc.strerror}") from None
    try:
        status = os.fstat(fd)
        said: list[str] = []
        found = _read(place, os.path.abspath(path), fd, status)
        if since is not None and (found is None or found[0].naive):
            found = None  # the whole log, as without an index
            history = _since(path, fd, _Index(0, 1, [], HistoryFold()), since, said.append)
        elif found is not None:
            try:
                if since is not None:
                    history = _since(path, fd, found[0], since, said.append)
                else:
                    history = _history(path, place, fd, status, found, said.append)
            except _Changed:  # shrank after the check: as if there were no index
                said.clear()
                found = None
                if since is not None:
                    history = _since(path, fd, _Index(0, 1, [], HistoryFold()), since, said.append)
        if found is None and since is None:
            history = _history(path, place, fd, status, None, said.append)
    except OSError as exc:
        raise ResultsError(f"cannot read results file {path}: {exc.strerror}") from None
    finally:
        os.close(fd)
    for message in said:
        say(message)
    return history


def _history(path: Path, place: IndexPlace, fd: int, status: os.stat_result, found: tuple[_Index, Any] | None,
             say: Callable[[str], None]) -> History:
    """Read the log past the index (`found`, else all of it), show it, and extend the index by its new lines."""
    if found is None:
        index, hasher = _Index(0, 1, [], HistoryFold()), xxhash.xxh3_128()
    else:
        index, hasher = found
        for line, what in index.skipped:
            say(warning(path, line, what))
    offset = index.offset
    with open(fd, "rb", closefd=False) as handle:
        handle.seek(offset)
        tail = handle.read()  # the whole log when there is no index
    source: bytes | _Lines = tail if offset == 0 else _Lines(fd, offset, tail)
    whole = tail.rfind(b"\n") + 1  # only complete lines are indexed
    payload = None
    if whole:
        records = _marked(scan(tail, path, say, end=whole, line=index.line, skipped=index.skipped), index, tail)
        index.fold.feed(records if offset == 0 else _shifted(records, offset))
        index.line += tail.count(b"\n", 0, whole)
        index.offset += whole
        hasher.update(memoryview(tail)[:whole])
        payload = _encode(os.path.abspath(path), status, hasher.digest(), index)  # now: the torn tail below
    if whole < len(tail):  # is fed to the same fold
        records = scan(tail, path, say, start=whole, line=index.line)
        index.fold.feed(records if offset == 0 else _shifted(records, offset))
    history = index.fold.history(path, source)
    if payload is not None:
        _write(place, payload)
    return history
