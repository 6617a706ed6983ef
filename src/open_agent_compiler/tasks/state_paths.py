"""Before a test run starts: every place it will write is usable, or the run stops with one line (exit 2).

`.oac/` must be a real directory of the project, and nothing the run writes in it (state database, caches,
build files, results log) may be a symbolic link or other non-file: oac never writes through a link planted
there. The results log and the JUnit file (paths the user chose) must be regular files or absent; a symlink
or directory at either is refused before any test runs, not after.
"""

from pathlib import Path

from open_agent_compiler import fsio
from open_agent_compiler.tasks.settings import STATE_DB, STATE_DIR, TestOptions

CACHE_DIRS = ("build", "render-memo", "key-cache")


def _check_file(path: Path, what: str) -> None:
    try:
        fsio.check_writable_file(fsio.trusted_root(path), str(path), show=str(path))
    except fsio.OacError as exc:
        raise fsio.UnsafePathError(f"cannot use {what}: {exc}") from None


def check_state_paths(options: TestOptions) -> None:
    root = options.root
    fsio.ensure_dir(root, STATE_DIR, show=str(root / STATE_DIR))
    for suffix in ("", "-wal", "-shm"):  # sqlite's own files sit next to the database
        _check_file(options.state_db.with_name(STATE_DB + suffix), "the state database")
    build = fsio.parts_under(options.build_dir, root)
    dirs = [f"{STATE_DIR}/{name}" for name in CACHE_DIRS] + ["/".join(build[:n]) for n in range(3, len(build) + 1)]
    for rel in dirs:
        entry = fsio.inspect(root, rel, read=False, show=rel)
        if entry.kind not in ("absent", "directory"):
            raise fsio.UnsafePathError(f"refusing to write {root / rel}: it is a {entry.kind}, not a directory (oac "
                                       "never writes through symbolic links)")
    _check_file(options.results_path, "the results file")
    if options.junit is not None:
        _check_file(options.junit if options.junit.is_absolute() else root / options.junit, "the JUnit file")
