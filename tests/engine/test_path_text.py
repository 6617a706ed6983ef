"""The text shortcuts of `keys.key.discovered_path` and `tasks.graph._relative` give exactly what pathlib gives:
they build key labels and file deps, so a difference would be a key that moves (or a dep that is never found)."""

from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from open_agent_compiler.keys.key import discovered_path
from open_agent_compiler.tasks.graph import _relative

SEGMENT = st.sampled_from(["a", "b.txt", "data", ".", "..", "", "x y", "é", "n@", "f?", "pkg", ".hidden"])
RELATIVE = st.lists(SEGMENT, min_size=0, max_size=4).map("/".join) | st.sampled_from(["/abs/x", "/", "./", "a//b"])
ROOTS = st.sampled_from(["/", "/proj", "/tmp/p q", "/r/sub"])


@given(ROOTS, RELATIVE, st.booleans())
def test_discovered_path_is_pathlibs_join(root: str, relative: str, folder: bool) -> None:
    relative = relative + "/" if folder and not relative.endswith("/") else relative
    full = str(Path(root) / relative)
    assert discovered_path(Path(root), relative) == (full + "/" if relative.endswith("/") else full)


@given(ROOTS, RELATIVE, st.booleans())
def test_relative_is_pathlibs_relative_to(root: str, relative: str, folder: bool) -> None:
    path = root.rstrip("/") + "/" + relative if relative and not relative.startswith("/") else relative or root
    path = path + "/" if folder and not path.endswith("/") else path
    try:
        expected = Path(path).relative_to(root).as_posix()
        expected = expected + "/" if path.endswith("/") else expected
    except ValueError:
        expected = path
    assert _relative(path, Path(root)) == expected
