"""The fast reader of the JSONL results log for the history views (`oac results`, `oac report`): the few fields
a summary needs from each record, found by one regex pass over the file, without decoding the lines.

No pydantic here (and nothing else slow to import): `oac results` imports this and the history, not the record
models. A line the regex does not take is decoded with json and read the same way (tests/report hold both paths
to the same result); a corrupt line is skipped with the warning `results.read_records` gives.
"""

import functools
import json
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from open_agent_compiler.errors import ResultsError

# A record as `ResultsLog` writes it (TestRecord's field order, no spaces), matched field by field up to its
# evidence: the fields a history summary needs are captured without decoding the line. A line this does not match
# (another writer, a field added before `evidence`, an escape inside a captured string) is decoded with json
# instead: same result, slower.
# No part of the pattern takes a newline (a JSON string holds none raw): a match never spans two lines, so scanning
# a log in pieces cut after a newline finds what one scan of the whole finds (the history index relies on it)
_STRING = rb'"[^"\\\n]*(?:\\.[^"\\\n]*)*"'  # any JSON string
_MAYBE = rb"(?:null|" + _STRING + rb")"
_SLIM_PATTERN = (
    rb'^\{"timestamp":"([^"\\\n]*)","run_id":"([^"\\\n]*)","test_id":"([^"\\\n]*)","test_kind":' + _STRING
    + rb',"test_name":' + _STRING + rb',"target_name":' + _STRING + rb',"status":"([a-z_]+)","passed":(?:true|false)'
    + rb',"score":[^,\n]*,"duration_s":([^,\n]*),"variant":' + _MAYBE + rb',"access_profile":' + _MAYBE
    + rb',"mock_profile":' + _MAYBE + rb',"model":' + _MAYBE + rb',"dialect":' + _MAYBE + rb',"config":' + _MAYBE
    + rb',"agent_state_hash":' + _STRING + rb',"mock_set_hash":' + _MAYBE
    + rb',"composite_hash":(?:"([^"\\\n]*)"|null),"evidence":'
)
# ... and the rest of the line, which must end its object: a line torn after `"evidence":` (a crashed writer) goes
# the json way and is skipped with a warning (one torn right after a `}` is still taken: its decode is guarded)
_LINES_PATTERN = _SLIM_PATTERN + rb"[^\n]*\}\n?"


@functools.cache
def _slim_lines() -> re.Pattern[bytes]:
    """Compiled on first use (~3 ms each): a repeat `oac results` reads through the history index and may scan
    nothing."""
    return re.compile(_LINES_PATTERN, re.MULTILINE)


def __getattr__(name: str) -> Any:
    if name == "_SLIM":  # the record pattern alone (tests, `history.log`)
        return re.compile(_SLIM_PATTERN)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


_STATUS_OF = {b"pass": "pass", b"fail": "fail", b"skipped": "skipped", b"not_runnable": "not_runnable"}

# timestamp, run id, test id, status, duration, key, the raw line: texts as UTF-8 bytes (decoded by the reader
# only where it shows them: 50,000 lines are read several times faster than by json.loads)
SlimRecord = tuple[bytes, bytes, bytes, str, float, bytes | None, bytes]
# the same with the line as its place in the file's bytes, data[start:end] (no copy of lines nobody reads)
Scanned = tuple[bytes, bytes, bytes, str, float, bytes | None, int, int]


def read_log(path: Path) -> bytes:
    """The whole log (b"" when there is none): one read, the regex runs over it in C."""
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return b""
    except OSError as exc:
        raise ResultsError(f"cannot read results file {path}: {exc.strerror}") from None


def _slim_from_json(value: dict[str, Any]) -> tuple[bytes, bytes, bytes, str, float, bytes | None] | None:
    test_id, run_id = value.get("test_id"), value.get("run_id")
    if not isinstance(test_id, str) or not isinstance(run_id, str):
        return None
    status = value.get("status")
    if status not in ("pass", "fail", "skipped", "not_runnable"):
        status = "pass" if value.get("passed") else "fail"
    duration = value.get("duration_s")
    duration = float(duration) if isinstance(duration, (int, float)) and not isinstance(duration, bool) else 0.0
    key = value.get("composite_hash")

    def utf8(text: str) -> bytes:
        return text.encode("utf-8", "surrogatepass")

    return (utf8(str(value.get("timestamp", ""))), utf8(run_id), utf8(test_id), status, duration,
            utf8(key) if isinstance(key, str) else None)


def scan(data: bytes, path: Path, warn: Any = None, *, start: int = 0, end: int | None = None, line: int = 1,
         skipped: list[tuple[int, str]] | None = None) -> Iterator[Scanned]:
    """The summary fields of each record of `data` (the bytes of `path`), in order, with where its line is.
    Lines in our writer's form are found by one regex pass (in C); the lines between two matches go through
    json, one by one.

    `start`/`end`: scan only `data[start:end]`, `start` being the beginning of a line (numbered `line`) and `end`
    the end of one; every place yielded is still one in `data`. `skipped`: also collects the (line number, what)
    of each line warned about, for the history index to repeat them."""
    say = warn or (lambda message: print(message, file=sys.stderr))
    stop = len(data) if end is None else end
    where = [line, start]  # line number at position `where[1]`, counted only when a warning needs it

    def slow(start: int, end: int) -> Iterator[Scanned]:
        for raw in data[start:end].splitlines(keepends=True):
            line_start, start = start, start + len(raw)
            if not raw.strip():
                continue
            try:
                value = json.loads(raw)
            except ValueError:
                value = None
            slim = _slim_from_json(value) if isinstance(value, dict) else None
            if slim is not None:
                yield (*slim, line_start, start)
                continue
            if isinstance(value, dict):
                continue  # a JSON object that is not a test record: nothing to show
            where[0] += data.count(b"\n", where[1], line_start)
            where[1] = line_start
            what = "a corrupt line" if value is None else "a line that is not a JSON object"
            if skipped is not None:
                skipped.append((where[0], what))
            say(warning(path, where[0], what))

    position = start
    status_of = _STATUS_OF
    for found in _slim_lines().finditer(data, start, stop):
        start, end = found.span()
        if start != position:
            yield from slow(position, start)
        position = end
        stamp, run_id, test_id, status, duration, key = found.groups()
        try:
            yield stamp, run_id, test_id, status_of[status], float(duration), key, start, end
        except (KeyError, ValueError):  # an unknown status or an odd number: json decides
            yield from slow(start, end)
    if position != stop:
        yield from slow(position, stop)


def warning(path: Path, line: int, what: str) -> str:
    """The warning about a line the history skips."""
    return f"oac: warning: {path}:{line}: skipping {what}"


def scan_records(path: Path, warn: Any = None) -> Iterator[SlimRecord]:
    """The summary fields of each record of `path`, in order, with the raw line (`json.loads` it for the rest);
    a corrupt line is skipped with the same warning `read_records` gives."""
    data = read_log(path)
    for stamp, run_id, test_id, status, duration, key, start, end in scan(data, path, warn):
        yield stamp, run_id, test_id, status, duration, key, data[start:end]
