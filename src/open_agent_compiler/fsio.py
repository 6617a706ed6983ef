"""Every file oac writes goes through here: regular files only, atomically, never through a symbolic link.

- A path is walked from a trusted `root` one directory at a time with O_NOFOLLOW (openat-style), so a symlink
  in any directory below the root is refused, never followed; missing directories are created the same way.
- A file is written to a temp file in its own directory, fsynced, then renamed over the destination; the temp
  file is removed on every error. What is at the destination must be a regular file or nothing: a symlink,
  directory, FIFO, socket or device node there is refused with one line (an `UnsafePathError`).
- New files get the mode the umask gives (0o666, or 0o777 when executable, masked); files holding secrets get
  0o600; `keep_mode` keeps the mode of the file being replaced (a user's file we merge into).
"""

import contextlib
import errno
import fcntl
import functools
import os
import stat
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from open_agent_compiler.errors import OacError

STATE_DIR = ".oac"
TEMP_SUFFIX = ".oac-tmp"
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


_OWN = threading.local()  # set while this thread is inside one of our own opens


def in_own_open() -> bool:
    """Whether this thread is inside an open made here: oac's own I/O, which the read tracker (`usercode.reads`)
    must not count as a read of user code running meanwhile in another thread (and whose names, relative to a
    directory fd, the audit hook cannot place)."""
    return getattr(_OWN, "active", False) or getattr(_OWN, "thread", False)


def own_thread() -> None:
    """Mark the calling thread as oac's own for its life: it never runs user code, so nothing it opens or lists
    (a driver's import scanning `sys.path` while the factory loads) is a read of user code."""
    _OWN.thread = True


def _open(path: str | Path, flags: int, mode: int = 0o777, *, dir_fd: int | None = None) -> int:
    """`os.open`, marked as oac's own (`in_own_open`)."""
    _OWN.active = True
    try:
        return os.open(path, flags, mode, dir_fd=dir_fd)
    finally:
        _OWN.active = False


class UnsafePathError(OacError):
    """Something other than a regular file or a real directory is where oac would write."""


def kind_of(mode: int) -> str:
    if stat.S_ISREG(mode):
        return "file"
    if stat.S_ISLNK(mode):
        return "symbolic link"
    if stat.S_ISDIR(mode):
        return "directory"
    if stat.S_ISFIFO(mode):
        return "FIFO"
    if stat.S_ISSOCK(mode):
        return "socket"
    return "device node"


def trusted_root(path: Path) -> Path:
    """Where a walk to `path` starts: for a path into a `.oac` state directory, the project holding it (so a
    symlink planted at or under `.oac/` is refused); for any other path, its parent, which the user named."""
    path = Path(os.path.abspath(path))
    parts = path.parts
    for index in range(len(parts) - 2, 0, -1):
        if parts[index] == STATE_DIR:
            return Path(*parts[:index])
    return path.parent


def parts_under(path: Path | str, root: Path) -> list[str]:
    """The segments of `path` (absolute, or relative to `root`) below `root`, refused if it leaves `root`."""
    full = os.path.normpath(os.path.join(os.path.abspath(root), path))
    base = os.path.normpath(os.path.abspath(root))
    rel = os.path.relpath(full, base)
    if rel == "." or rel.startswith(".." + os.sep) or rel == ".." or os.path.isabs(rel):
        raise UnsafePathError(f"refusing to write {path}: it is not inside {root}")
    return rel.split(os.sep)


def _lstat(name: str, dir_fd: int) -> os.stat_result | None:
    try:
        return os.lstat(name, dir_fd=dir_fd)
    except FileNotFoundError:
        return None


def _open_root(root: Path, show: str, create: bool) -> int | None:
    """The trusted root is followed as the user named it (a symlinked project or target is their choice)."""
    try:
        return _open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except FileNotFoundError:
        if not create:
            return None
        try:
            os.makedirs(root, exist_ok=True)
            return _open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        except OSError as exc:
            raise OacError(f"cannot write {show}: {root}: {exc.strerror}") from None
    except OSError as exc:
        raise OacError(f"cannot {'write' if create else 'read'} {show}: {root}: {exc.strerror}") from None


def open_dir(root: Path, parts: Sequence[str], *, create: bool, show: str) -> int | None:
    """An fd of `root/parts...`, each step opened without following a symlink; None if a step is missing and
    not `create`. Directories made here get 0o777 minus the umask."""
    fd = _open_root(root, show, create)
    if fd is None:
        return None
    try:
        for depth, part in enumerate(parts):
            if part in ("", ".", "..") or "/" in part or "\x00" in part:
                raise UnsafePathError(f"refusing to write {show}: {part!r} is not a plain path segment")
            for _ in range(3):  # a directory made or removed by a concurrent run between the two calls
                try:
                    child = _open(part, _DIR_FLAGS, dir_fd=fd)
                    break
                except FileNotFoundError:
                    if not create:
                        os.close(fd)
                        return None
                    with contextlib.suppress(FileExistsError):
                        os.mkdir(part, 0o777, dir_fd=fd)
                except OSError as exc:
                    if exc.errno not in (errno.ELOOP, errno.ENOTDIR):
                        raise
                    found = _lstat(part, fd)
                    what = kind_of(found.st_mode) if found else "missing"
                    where = "/".join(parts[: depth + 1])
                    raise UnsafePathError(
                        f"refusing to write {show}: {where} is a {what}, not a directory (oac never writes through "
                        "symbolic links)") from None
            else:
                raise OacError(f"cannot create directory {'/'.join(parts[: depth + 1])} for {show}")
            os.close(fd)
            fd = child
        return fd
    except OSError as exc:  # unreadable, read-only, full: one line naming the path
        with contextlib.suppress(OSError):
            os.close(fd)
        raise OacError(f"cannot {'write' if create else 'read'} {show}: {exc.strerror}") from None
    except BaseException:
        with contextlib.suppress(OSError):
            os.close(fd)
        raise


def _parent_dir(root: Path, parts: Sequence[str], show: str) -> int:
    """An fd of the directory that holds `parts[-1]`, made if missing (open_dir turns every OSError into one
    line naming `show`)."""
    fd = open_dir(root, parts[:-1], create=True, show=show)
    assert fd is not None  # with create=True it opens or raises
    return fd


@dataclass(frozen=True)
class Entry:
    """What is at a path: `kind` is "absent", "file", "symbolic link", "directory", "FIFO", ...;
    `data` the bytes of a regular file when asked for."""

    kind: str
    data: bytes | None = None


def inspect(root: Path, rel: str, *, read: bool = True, show: str | None = None) -> Entry:
    """What is at `root/rel`, reading a regular file's bytes. A symlinked directory on the way is refused."""
    parts = parts_under(rel, root)
    shown = show or rel
    dir_fd = open_dir(root, parts[:-1], create=False, show=shown)
    if dir_fd is None:
        return Entry("absent")
    try:
        found = _lstat(parts[-1], dir_fd)
        if found is None:
            return Entry("absent")
        if not stat.S_ISREG(found.st_mode) or not read:
            return Entry(kind_of(found.st_mode))
        fd = _open(parts[-1], os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=dir_fd)
        with os.fdopen(fd, "rb") as handle:
            if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
                return Entry("other")
            return Entry("file", handle.read())
    except OSError as exc:
        raise OacError(f"cannot read {shown}: {exc.strerror}") from None
    finally:
        os.close(dir_fd)


def temp_name(name: str, token: str | None = None) -> str:
    """The temp file a write of `name` goes through: hidden, next to it, named so a crash leftover is ours."""
    return f".{name[:180]}.{token}{TEMP_SUFFIX}" if token else f".{name[:180]}{TEMP_SUFFIX}"


def _refuse_unless_regular(name: str, dir_fd: int, show: str) -> os.stat_result | None:
    found = _lstat(name, dir_fd)
    if found is not None and not stat.S_ISREG(found.st_mode):
        raise UnsafePathError(f"refusing to write {show}: a {kind_of(found.st_mode)} is in the way (oac writes only "
                              "regular files)")
    return found


def write_file(root: Path, rel: str, data: bytes, *, executable: bool = False, private: bool = False,
               keep_mode: bool = False, durable: bool = True, fixed_temp: bool = False,
               show: str | None = None, batch: "Batch | None" = None) -> None:
    """Atomically make `root/rel` a regular file holding `data`.

    `fixed_temp`: use the one predictable temp name (for writers that hold a lock, so a crash leftover can be
    found and removed); otherwise a random one. `durable`: fsync file and directory (a cache may skip it).
    `batch`: only write the temp file now; `batch.commit()` makes every file of the batch durable at once and
    renames them into place (the same checks, one sync instead of two fsyncs per file)."""
    parts = parts_under(rel, root)
    shown = show or rel
    name = parts[-1]
    # os.urandom(6).hex() is secrets.token_hex(6), without importing secrets (hmac, OpenSSL: ~10 ms of start-up)
    temp = temp_name(name, None if fixed_temp else os.urandom(6).hex())
    dir_fd = _parent_dir(root, parts, shown) if batch is None else batch.dir_fd(root, parts[:-1], shown)
    made = False
    try:
        existing = _refuse_unless_regular(name, dir_fd, shown)
        if fixed_temp:
            remove_temp(dir_fd, temp)
        perm = 0o600 if private else 0o777 if executable else 0o666
        fd = _open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, perm, dir_fd=dir_fd)
        made = True
        try:
            if keep_mode and existing is not None and not private:
                os.fchmod(fd, stat.S_IMODE(existing.st_mode))
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
            if durable and batch is None:
                os.fsync(fd)
        finally:
            os.close(fd)
        if batch is not None:
            batch.staged.append((dir_fd, temp, name, shown))
            made = False  # the batch owns the temp file now (commit renames it, discard removes it)
            return
        _refuse_unless_regular(name, dir_fd, shown)  # again, right before the rename: the window stays small
        os.rename(temp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
        made = False
        if durable:
            os.fsync(dir_fd)
    except OSError as exc:
        raise OacError(f"cannot write {shown}: {exc.strerror}") from None
    finally:
        if made:
            remove_temp(dir_fd, temp)
        if batch is None:
            os.close(dir_fd)


class Batch:
    """Files written together and made durable together (the compile writer's files, under its lock).

    `write_file(..., batch=b)` leaves each file's bytes in its temp name. `commit()` then makes all of them
    durable with one sync of the target's filesystem, renames each into place (checking again that only a
    regular file is replaced) and syncs once more, so the renames are durable before the caller commits its
    manifest. `discard()` removes every temp file not renamed (on any error). A process killed in between leaves
    only temp files, and every destination holds its old or its new bytes. Directory fds are opened once per
    directory (walked without following symlinks, like every write)."""

    def __init__(self) -> None:
        self.dirs: dict[tuple[str, ...], int] = {}
        self.staged: list[tuple[int, str, str, str]] = []  # (dir fd, temp name, name, shown)

    def dir_fd(self, root: Path, parts: Sequence[str], show: str) -> int:
        key = (str(root), *parts)
        if key not in self.dirs:
            fd = open_dir(root, parts, create=True, show=show)
            assert fd is not None  # with create=True it opens or raises
            self.dirs[key] = fd
        return self.dirs[key]

    def commit(self) -> None:
        shown = ""
        try:
            filesystems = {os.fstat(fd).st_dev: fd for fd in self.dirs.values()}.values()
            for fd in filesystems if self.staged else ():
                sync_filesystem(fd)  # every temp file's data, before any rename
            for dir_fd, temp, name, shown in self.staged:  # discard() skips the temp names already renamed
                _refuse_unless_regular(name, dir_fd, shown)
                os.rename(temp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
            for fd in filesystems if self.staged else ():
                sync_filesystem(fd)  # the renames (and removals before them), durable before the manifest
        except OSError as exc:
            raise OacError(f"cannot write {shown or 'files'}: {exc.strerror}") from None
        finally:
            self.discard()

    def discard(self) -> None:
        for dir_fd, temp, _name, _shown in self.staged:
            with contextlib.suppress(OSError):
                remove_temp(dir_fd, temp)
        self.staged = []
        for fd in self.dirs.values():
            with contextlib.suppress(OSError):
                os.close(fd)
        self.dirs = {}


def sync_filesystem(fd: int) -> None:
    """Make everything written to the filesystem holding `fd` durable: `syncfs(2)` where the C library has it
    (one call for a whole batch of files: measured 0.1–0.5 s for 1,100 files here, against 1.4–5.9 s for an
    fsync of each file and its directory), else `os.sync()`."""
    call = _syncfs()
    if call is None:
        os.sync()
    elif call(fd) != 0:
        import ctypes

        code = ctypes.get_errno()
        raise OSError(code, os.strerror(code))


@functools.cache
def _syncfs() -> Any:
    try:
        import ctypes

        function = ctypes.CDLL(None, use_errno=True).syncfs
    except (OSError, AttributeError, ImportError):
        return None
    function.argtypes = [ctypes.c_int]
    return function


def remove_temp(dir_fd: int, temp: str) -> None:
    """Remove our temp file `temp` in `dir_fd` if it is there and a regular file."""
    found = _lstat(temp, dir_fd)
    if found is not None and stat.S_ISREG(found.st_mode):
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temp, dir_fd=dir_fd)


def remove_leftover_temp(root: Path, rel: str) -> None:
    """Remove the fixed temp file a killed write of `rel` may have left."""
    parts = parts_under(rel, root)
    with contextlib.suppress(OacError, OSError):
        dir_fd = open_dir(root, parts[:-1], create=False, show=rel)
        if dir_fd is not None:
            try:
                remove_temp(dir_fd, temp_name(parts[-1]))
            finally:
                os.close(dir_fd)


def remove_file(root: Path, rel: str, *, show: str | None = None) -> bool:
    """Remove `root/rel` if it is a regular file reached without symlinks; True if it was removed."""
    parts = parts_under(rel, root)
    shown = show or rel
    dir_fd = open_dir(root, parts[:-1], create=False, show=shown)
    if dir_fd is None:
        return False
    try:
        found = _lstat(parts[-1], dir_fd)
        if found is None or not stat.S_ISREG(found.st_mode):
            return False
        os.unlink(parts[-1], dir_fd=dir_fd)
        return True
    except FileNotFoundError:
        return False
    except OSError as exc:
        raise OacError(f"cannot remove {shown}: {exc.strerror}") from None
    finally:
        os.close(dir_fd)


def remove_empty_dir(root: Path, rel: str) -> bool:
    """Remove `root/rel` if it is a real, empty directory reached without symlinks; True if it is gone."""
    parts = parts_under(rel, root)
    try:
        parent = open_dir(root, parts[:-1], create=False, show=rel)
    except UnsafePathError:
        return False
    if parent is None:
        return True
    try:
        found = _lstat(parts[-1], parent)
        if found is None:
            return True
        if not stat.S_ISDIR(found.st_mode):
            return False
        os.rmdir(parts[-1], dir_fd=parent)
        return True
    except OSError as exc:
        if exc.errno in (errno.ENOTEMPTY, errno.EEXIST, errno.EBUSY, errno.ENOTDIR):
            return False
        raise OacError(f"cannot remove directory {rel}: {exc.strerror}") from None
    finally:
        os.close(parent)


def ensure_dir(root: Path, rel: str, *, show: str | None = None) -> None:
    """Make `root/rel` a real directory (creating what is missing), refusing symlinks on the way."""
    try:
        fd = open_dir(root, parts_under(rel, root), create=True, show=show or rel)
    except OSError as exc:
        raise OacError(f"cannot create {show or rel}: {exc.strerror}") from None
    assert fd is not None
    os.close(fd)


def check_writable_file(root: Path, rel: str, *, show: str | None = None) -> None:
    """Fail now, with one line, if `root/rel` could not be written as a regular file (a symlink, directory or
    other non-file on the way or at the end). Nothing is created."""
    entry = inspect(root, rel, read=False, show=show)
    if entry.kind not in ("absent", "file"):
        raise UnsafePathError(f"refusing to write {show or rel}: a {entry.kind} is in the way (oac writes only "
                              "regular files)")


def open_append(root: Path, rel: str, *, show: str | None = None) -> int:
    """An O_APPEND fd of the regular file `root/rel` (created with the umask's mode), refusing anything else."""
    parts = parts_under(rel, root)
    shown = show or rel
    dir_fd = _parent_dir(root, parts, shown)
    try:
        _refuse_unless_regular(parts[-1], dir_fd, shown)
        fd = _open(parts[-1], os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC,
                     0o666, dir_fd=dir_fd)
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            os.close(fd)
            raise UnsafePathError(f"refusing to write {shown}: a {kind_of(mode)} is in the way")
        os.set_blocking(fd, True)
        return fd
    except UnsafePathError:
        raise
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise UnsafePathError(f"refusing to write {shown}: a symbolic link is in the way") from None
        raise OacError(f"cannot open {shown}: {exc.strerror}") from None
    finally:
        os.close(dir_fd)


@contextlib.contextmanager
def exclusive_lock(root: Path, rel: str, *, show: str | None = None) -> Iterator[None]:
    """Hold an flock on the lock file `root/rel` (made if missing) for the duration of the block. The holder
    unlinks the file before releasing it, so no lock file stays behind; a waiter that then wins the unlinked
    inode sees it is no longer at `rel` and tries again."""
    parts = parts_under(rel, root)
    shown = show or rel
    while True:
        dir_fd = _parent_dir(root, parts, shown)
        try:
            fd = _open(parts[-1], os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, 0o666,
                         dir_fd=dir_fd)
        except FileNotFoundError:  # its directory was removed by the holder we waited for
            os.close(dir_fd)
            continue
        except OSError as exc:
            os.close(dir_fd)
            if exc.errno == errno.ELOOP:
                raise UnsafePathError(f"refusing to lock {shown}: a symbolic link is in the way") from None
            raise OacError(f"cannot lock {shown}: {exc.strerror}") from None
        os.close(dir_fd)
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                raise UnsafePathError(f"refusing to lock {shown}: it is not a regular file")
            fcntl.flock(fd, fcntl.LOCK_EX)  # waits for the compile holding it
            if _still_linked(root, parts, fd):
                break
        except BaseException:  # also Ctrl-C while waiting
            os.close(fd)
            raise
        os.close(fd)
    try:
        yield
    finally:
        with contextlib.suppress(OacError, OSError):
            remove_file(root, rel)
        os.close(fd)  # closing releases the flock


def _still_linked(root: Path, parts: list[str], fd: int) -> bool:
    try:
        dir_fd = open_dir(root, parts[:-1], create=False, show="/".join(parts))
    except (OSError, OacError):
        return False
    if dir_fd is None:
        return False
    try:
        found = _lstat(parts[-1], dir_fd)
    finally:
        os.close(dir_fd)
    mine = os.fstat(fd)
    return found is not None and (found.st_dev, found.st_ino) == (mine.st_dev, mine.st_ino)
