"""Our distribution has its own name, so `pip install -U open-agent-compiler` cannot resolve to the public
package and replace ours; the import package and the command stay `open_agent_compiler` and `oac`."""

import importlib.metadata
import tomllib
from pathlib import Path

import open_agent_compiler

ROOT = Path(__file__).resolve().parents[2]
DIST = "oac-toolkit"


def test_the_distribution_is_named_apart_from_the_public_package() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert project["name"] == DIST
    assert project["scripts"] == {"oac": "open_agent_compiler.cli:main"}
    assert importlib.metadata.version(DIST) == open_agent_compiler.__version__
    top_level = importlib.metadata.distribution(DIST).read_text("top_level.txt")
    assert top_level is None or "open_agent_compiler" in top_level.split()


def test_the_readme_says_the_two_cannot_be_installed_side_by_side() -> None:
    readme = " ".join((ROOT / "README.md").read_text().split())
    assert f"The distribution is named `{DIST}`" in readme
    assert "the two cannot be installed side by side" in readme


def test_no_code_looks_our_version_up_under_the_public_name() -> None:
    offenders = [str(path.relative_to(ROOT)) for path in (ROOT / "src").rglob("*.py")
                 if "version(\"open-agent-compiler\")" in path.read_text() or
                 "version('open-agent-compiler')" in path.read_text()]
    assert offenders == []
