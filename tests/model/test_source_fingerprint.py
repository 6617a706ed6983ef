"""The source fingerprint (what every key and memo takes of our own code) is the digest pathlib's walk gave."""

from pathlib import Path

import pytest

from open_agent_compiler.model import hashing
from open_agent_compiler.model.hashing import digest, digest_bytes, source_fingerprint


def pathlib_fingerprint(root: Path, *subpackages: str) -> str:
    files = sorted(path for name in subpackages for path in (root / name).rglob("*.py"))
    return digest([(path.relative_to(root).as_posix(), digest_bytes(path.read_bytes())) for path in files])


@pytest.fixture
def package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "pkg"
    # names whose order as text differs from their order as parts ("a.py" < "a/b.py" as text, not as parts)
    for relative in ("a.py", "a/b.py", "a/z/__init__.py", "a-b/c.py", "a_b.py", "a/notes.txt", "a/.hidden.py",
                     "a/__pycache__/b.cpython-311.pyc", "b/x.py", "b/y/x.py", "a/B.py"):
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(f"# {relative}\n".encode())
    monkeypatch.setattr(hashing, "PACKAGE_ROOT", root)
    source_fingerprint.cache_clear()
    yield root
    source_fingerprint.cache_clear()


def test_the_fingerprint_is_pathlibs_walk_and_order(package: Path) -> None:
    for combo in (("a",), ("a", "b"), ("b", "a"), ("a-b", "a", "b"), ("b", "b")):
        assert source_fingerprint(*combo) == pathlib_fingerprint(package, *combo), combo
    assert source_fingerprint("a", "b") == source_fingerprint("b", "a")


def test_an_edit_a_new_file_or_a_rename_changes_it_after_a_cache_clear(package: Path) -> None:
    seen = {source_fingerprint("a", "b")}
    for change in (lambda: (package / "a" / "z" / "__init__.py").write_text("# edited\n"),
                   lambda: (package / "b" / "new.py").write_text(""),
                   lambda: (package / "b" / "new.py").rename(package / "b" / "renamed.py")):
        change()
        assert source_fingerprint("a", "b") in seen  # read once per process
        source_fingerprint.cache_clear()
        now = source_fingerprint("a", "b")
        assert now not in seen and now == pathlib_fingerprint(package, "a", "b")
        seen.add(now)


def test_the_real_package_fingerprints_as_pathlib_did() -> None:
    source_fingerprint.cache_clear()
    for combo in (("model", "compiler"), ("model", "compiler", "testing", "usercode")):
        assert source_fingerprint(*combo) == pathlib_fingerprint(hashing.PACKAGE_ROOT, *combo)
