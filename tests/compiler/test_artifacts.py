"""`load_agent_artifact` / `list_agent_artifacts`: one shape for all four dialects, nested names, clear errors."""

from pathlib import Path

import pytest
from oac_builders import DIALECT_NAMES

from open_agent_compiler.compiler.dialects import DIALECTS
from open_agent_compiler.compiler.frontmatter import parse_markdown, render_markdown
from open_agent_compiler.compiler.writer import write_output
from open_agent_compiler.errors import OacError
from open_agent_compiler.model.registry import ResolvedConfig
from open_agent_compiler.testing import AgentArtifact, list_agent_artifacts, load_agent_artifact
from open_agent_compiler.testing.artifacts import load_capabilities


@pytest.fixture
def build(team: ResolvedConfig, tmp_path: Path) -> Path:
    for name in DIALECT_NAMES:
        write_output(DIALECTS[name].compile(team), tmp_path, dialect=name)
    return tmp_path


@pytest.mark.parametrize("dialect", DIALECT_NAMES)
def test_every_dialect_loads_to_the_same_shape(dialect: str, build: Path) -> None:
    assert list_agent_artifacts(build, dialect) == ["primary", "researcher", "writer"]
    art = load_agent_artifact(build, "writer", dialect=dialect)
    assert isinstance(art, AgentArtifact) and art.name == "writer" and art.dialect == dialect
    assert art.path == build / DIALECTS[dialect].agents_dir / f"writer{DIALECTS[dialect].agent_suffix}"
    assert art.config["description"] == "writer agent"
    assert art.body.startswith("You are writer.") and "### Tool: stats" in art.body


def test_codex_config_is_the_toml_table_and_body_the_instructions(build: Path) -> None:
    art = load_agent_artifact(build, "primary", dialect="codex")
    assert art.config["sandbox_mode"] == "read-only"
    assert art.body == art.config["developer_instructions"]


def test_default_dialect_is_opencode(build: Path) -> None:
    assert load_agent_artifact(build, "primary").config["mode"] == "primary"
    assert list_agent_artifacts(build) == ["primary", "researcher", "writer"]


def test_nested_names(tmp_path: Path) -> None:
    path = tmp_path / ".opencode/agents/team/helper.md"
    path.parent.mkdir(parents=True)
    path.write_bytes(render_markdown({"description": "Helps."}, "Body."))
    assert list_agent_artifacts(tmp_path, "opencode") == ["team/helper"]
    assert load_agent_artifact(tmp_path, "team/helper").body == "Body.\n"


def test_unknown_name_names_name_dialect_and_dir(build: Path) -> None:
    with pytest.raises(OacError) as caught:
        load_agent_artifact(build, "ghost", dialect="pi")
    message = str(caught.value)
    assert "no pi agent 'ghost'" in message and str(build / ".pi/agents") in message
    assert "found: primary, researcher, writer" in message


def test_unknown_dialect_and_unsafe_name(build: Path) -> None:
    with pytest.raises(OacError, match="unknown dialect 'vim'"):
        load_agent_artifact(build, "primary", dialect="vim")
    with pytest.raises(OacError, match="unsafe agent name"):
        load_agent_artifact(build, "../primary")


def test_empty_build_lists_nothing(tmp_path: Path) -> None:
    assert list_agent_artifacts(tmp_path, "codex") == []


@pytest.mark.parametrize("dialect", DIALECT_NAMES)
def test_capabilities_from_disk_match_capabilities_in_memory(dialect: str, build: Path, team: ResolvedConfig) -> None:
    spec = DIALECTS[dialect]
    in_memory = spec.capabilities("writer", spec.compile(team).file_map())
    assert load_capabilities(build, "writer", dialect) == in_memory


def test_frontmatter_parser_is_line_based() -> None:
    data = b'---\ndescription: "a\\n---\\nb"\nmode: primary\n---\n\nbody\n---\nmore\n'
    config, body = parse_markdown(data, "x.md")
    assert config == {"description": "a\n---\nb", "mode": "primary"} and body == "body\n---\nmore\n"
    assert parse_markdown(b"no frontmatter\n", "x.md") == ({}, "no frontmatter\n")
    assert parse_markdown(b"---\r\ndescription: d\r\n---\r\nbody", "x.md") == ({"description": "d"}, "body")


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"---\ndescription: d\n", "no closing '---' line"),
        (b"---\n: : :\n---\n", "frontmatter is not valid YAML"),
        (b"---\n- a\n---\n", "frontmatter must be a YAML mapping, not list"),
        (b"\xff\xfe", "not UTF-8 text"),
    ],
)
def test_frontmatter_errors_name_the_file(data: bytes, message: str) -> None:
    with pytest.raises(OacError, match=message) as caught:
        parse_markdown(data, "agents/x.md")
    assert str(caught.value).startswith("agents/x.md: ")


def test_broken_codex_toml_names_the_file(tmp_path: Path) -> None:
    path = tmp_path / ".codex/agents/x.toml"
    path.parent.mkdir(parents=True)
    path.write_text("name = ")
    with pytest.raises(OacError, match=r"x\.toml: not valid TOML"):
        load_agent_artifact(tmp_path, "x", dialect="codex")
