"""Validation of names that end up in file paths, file names or harness identifiers."""

import re
from open_agent_compiler.errors import UnsafeNameError

# One path segment: starts alphanumeric, then alphanumerics, dot, dash, underscore. No separators, no '..'.
_SEGMENT = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")
_POSTFIX = re.compile(r"[A-Za-z0-9._-]{0,64}")
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
NAME_MAX = 255  # bytes of one path segment on the usual file systems (ext4, APFS, NTFS...)
PATH_MAX = 1024  # bytes of a whole relative path we emit


def check_segment(value: str, what: str) -> str:
    """Accept `value` only as one safe path segment; otherwise raise naming `what`."""
    if not isinstance(value, str) or not _SEGMENT.fullmatch(value) or ".." in value:
        raise UnsafeNameError(f"unsafe {what} {value!r}: use letters, digits, '.', '-', '_' (no path separators or '..')")
    return value


def check_postfix(value: str) -> str:
    if not isinstance(value, str) or not _POSTFIX.fullmatch(value) or ".." in value:
        raise UnsafeNameError(f"unsafe postfix {value!r}: use letters, digits, '.', '-', '_' only")
    return value


def relative_parts(value: str) -> list[str]:
    """The segments of a relative POSIX path as `PurePosixPath(value).parts` gives them (no empty or '.')."""
    return [part for part in value.split("/") if part not in ("", ".")]


def check_relative_path(value: str, what: str) -> str:
    """Accept a relative POSIX path that stays inside its root (no '..', no absolute path, no NUL)."""
    if not isinstance(value, str) or not value or "\x00" in value or "\\" in value:
        raise UnsafeNameError(f"unsafe {what} {value!r}: must be a non-empty relative path")
    parts = relative_parts(value)  # (split once: every compiled file's path is checked, ~2,000 a run)
    if value.startswith(("/", "~")) or ".." in parts:
        raise UnsafeNameError(f"unsafe {what} {value!r}: must stay inside the target directory")
    if not parts or value.endswith("/"):  # ".", "./", "a/": a directory, not a file
        raise UnsafeNameError(f"unsafe {what} {value!r}: must name a file inside the target directory")
    if _CONTROL.search(value):
        raise UnsafeNameError(f"unsafe {what} {value!r}: control characters are not allowed")
    if value.isascii():  # a character is a byte: no encoding needed
        longest, size = max(map(len, parts)), len(value)
    else:
        longest = max(len(part.encode("utf-8", "surrogatepass")) for part in parts)
        size = len(value.encode("utf-8", "surrogatepass"))
    if longest > NAME_MAX or size > PATH_MAX:
        shown = repr(value) if len(value) <= 80 else repr(value[:60]) + f"… ({len(value)} characters)"
        if longest > NAME_MAX:
            raise UnsafeNameError(f"unsafe {what} {shown}: a path segment is longer than {NAME_MAX} bytes")
        raise UnsafeNameError(f"unsafe {what} {shown}: longer than {PATH_MAX} bytes")
    return value
