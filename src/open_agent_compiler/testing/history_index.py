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
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import xxhash

from open_agent_compiler import fsio
from open_agent_compiler.errors import OacError
from open_agent_compiler.testing.history import History, HistoryFold
from open_agent_compiler.testing.history_scan import read_log_stat, scan, warning

INDEX_DIR = "results-index"
_MAGIC = b"oac-results-index 1\n"
# marshal's format is the interpreter's: an index written by another Python is rebuilt, not misread
_PYTHON = f"{sys.implementation.cache_tag} marshal {marshal.version}"
_DIGEST = 16


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


def _prefix_digest(data: bytes, offset: int) -> bytes:
    return xxhash.xxh3_128_digest(memoryview(data)[:offset])


def _read(place: IndexPlace, results: str, data: bytes, status: os.stat_result) -> _Index | None:
    """The index of `data` (the log at `results`, read with `status`), or None when there is none to trust."""
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
        python, path, device, inode, offset, digest, line, skipped, state = marshal.loads(body)
        if (python, path, device, inode) != (_PYTHON, results, status.st_dev, status.st_ino):
            return None
        if not (0 < offset <= len(data) and data[offset - 1] == 0x0A and _prefix_digest(data, offset) == digest):
            return None  # truncated, rewritten or replaced since
        return _Index(offset, line, list(skipped), HistoryFold.restore(state))
    except (ValueError, TypeError, EOFError, KeyError, IndexError):
        return None


def _encode(results: str, status: os.stat_result, data: bytes, index: _Index) -> bytes:
    body = marshal.dumps((_PYTHON, results, status.st_dev, status.st_ino, index.offset,
                          _prefix_digest(data, index.offset), index.line, index.skipped, index.fold.dump()))
    return _MAGIC + xxhash.xxh3_128_digest(body) + body


def _write(place: IndexPlace, payload: bytes) -> None:
    try:
        fsio.write_file(place.root, place.rel, payload, durable=False, show=place.rel)
    except OacError:  # read-only, full, or something not ours in the way: the view works without it
        pass


def load_indexed(path: Path, place: IndexPlace, warn: Callable[[str], None] | None = None) -> History:
    """The history of `path` (what `history.load_history` gives), through and updating its index at `place`."""
    if not path.exists():
        raise OacError(f"no results file at {path}: run `oac test` first, or pass --results")
    say = warn or (lambda message: print(message, file=sys.stderr))
    data, status = read_log_stat(path)
    if status is None:
        raise OacError(f"no results file at {path}: run `oac test` first, or pass --results")
    results = os.path.abspath(path)
    index = _read(place, results, data, status)
    if index is None:
        index = _Index(0, 1, [], HistoryFold())
    else:
        for line, what in index.skipped:
            say(warning(path, line, what))
    whole = data.rfind(b"\n") + 1  # only complete lines are indexed
    payload = None
    if whole > index.offset:
        index.fold.feed(scan(data, path, say, start=index.offset, end=whole, line=index.line, skipped=index.skipped))
        index.line += data.count(b"\n", index.offset, whole)
        index.offset = whole
        payload = _encode(results, status, data, index)  # now: the torn tail below is fed to the same fold
    if whole < len(data):
        index.fold.feed(scan(data, path, say, start=whole, line=index.line))
    history = index.fold.history(path, data)
    if payload is not None:
        _write(place, payload)
    return history
