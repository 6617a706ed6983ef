"""`check_relative_path` measures segments and the whole path in UTF-8 bytes (ASCII paths by length, others
encoded), and names the limit a path breaks."""

import pytest
from hypothesis import given, strategies as st

from open_agent_compiler.errors import UnsafeNameError
from open_agent_compiler.model.names import NAME_MAX, PATH_MAX, check_relative_path


def _expected(value: str) -> str | None:
    """The limit `value` breaks, measured the slow and obvious way (None: within both)."""
    parts = [part for part in value.split("/") if part not in ("", ".")]
    if max(len(part.encode("utf-8", "surrogatepass")) for part in parts) > NAME_MAX:
        return "segment"
    if len(value.encode("utf-8", "surrogatepass")) > PATH_MAX:
        return "path"
    return None


@pytest.mark.parametrize("value, broken", [
    ("a/" + "é" * 127 + ".md", "segment"),  # 130 characters, 257 bytes
    ("a/" + "é" * 126 + ".md", None),  # 255 bytes
    ("a/" + "x" * 255, None),
    ("a/" + "x" * 256, "segment"),
    ("/".join(["€" * 80] * 5) + "/x", "path"),  # 240 bytes a segment, 1,206 in all, 406 characters
    ("/".join(["x" * 200] * 5) + "/x", None),
])
def test_limits_in_bytes(value: str, broken: str | None) -> None:
    assert _expected(value) == broken
    if broken is None:
        assert check_relative_path(value, "file") == value
    else:
        with pytest.raises(UnsafeNameError, match="a path segment is longer" if broken == "segment"
                           else "longer than 1024 bytes"):
            check_relative_path(value, "file")


@given(st.lists(st.text(st.sampled_from("ab\u00e9\u20ac\U0001f600x"), min_size=1, max_size=300),
                min_size=1, max_size=6))
def test_any_segments(segments: list[str]) -> None:
    value = "/".join(segments)
    broken = _expected(value)
    if broken is None:
        assert check_relative_path(value, "file") == value
    else:
        with pytest.raises(UnsafeNameError) as raised:
            check_relative_path(value, "file")
        assert ("segment" in str(raised.value)) == (broken == "segment")
