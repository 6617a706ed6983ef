"""mock_source_files finds a callable mock's source without executing it."""

from pathlib import Path

import pytest

from open_agent_compiler.model.core.mock import MockResponse
from open_agent_compiler.testing.mocks import mock_source_files

MARKER_SOURCE = """\
from pathlib import Path
Path(__file__).with_name("{marker}").write_text("imported")

def handle(payload):
    return payload
"""


@pytest.fixture()
def package_name(tmp_path: Path) -> str:
    return "oac_src_" + "".join(ch if ch.isalnum() else "_" for ch in tmp_path.name)


def test_finds_a_top_level_module_without_running_it(tmp_path: Path, package_name: str) -> None:
    module = tmp_path / f"{package_name}.py"
    module.write_text(MARKER_SOURCE.format(marker="imported.marker"))
    response = MockResponse(kind="callable", callable_spec=f"{package_name}:handle")
    assert mock_source_files(response, tmp_path) == [module.resolve()]
    assert not (tmp_path / "imported.marker").exists()


def test_finds_a_nested_module_and_its_package_inits_without_running_any(tmp_path: Path, package_name: str) -> None:
    package = tmp_path / package_name
    (package / "mocks").mkdir(parents=True)
    (package / "__init__.py").write_text(MARKER_SOURCE.format(marker="pkg.marker"))
    (package / "mocks" / "__init__.py").write_text(MARKER_SOURCE.format(marker="sub.marker"))
    leaf = package / "mocks" / "alerts.py"
    leaf.write_text(MARKER_SOURCE.format(marker="leaf.marker"))
    response = MockResponse(kind="stateful_callable", callable_spec=f"{package_name}.mocks.alerts:handle")
    found = mock_source_files(response, tmp_path)
    assert found == [
        (package / "__init__.py").resolve(),
        (package / "mocks" / "__init__.py").resolve(),
        leaf.resolve(),
    ]
    assert list(tmp_path.rglob("*.marker")) == []


def test_non_callable_kinds_and_unknown_modules_have_no_source_files(tmp_path: Path, package_name: str) -> None:
    assert mock_source_files(MockResponse(kind="fixed", fixed_output=1), tmp_path) == []
    assert mock_source_files(MockResponse(kind="echo"), tmp_path) == []
    assert mock_source_files(None, tmp_path) == []
    missing = MockResponse(kind="callable", callable_spec=f"{package_name}_absent:fn")
    assert mock_source_files(missing, tmp_path) == []


def test_modules_outside_the_project_root_are_found_on_sys_path(tmp_path: Path) -> None:
    response = MockResponse(kind="callable", callable_spec="json.decoder:JSONDecoder")
    found = mock_source_files(response, tmp_path)
    assert [path.name for path in found] == ["__init__.py", "decoder.py"]
