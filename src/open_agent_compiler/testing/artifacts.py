"""The universal compiled-artifact loader: one shape for every dialect's agent files.

`config` is the parsed frontmatter (the TOML table for codex) and `body` the markdown body
(`developer_instructions` for codex). Names may be nested (`team/helper`): the path under the dialect's agent
directory, without the suffix.
"""

from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from open_agent_compiler.compiler.dialects import DEFAULT_DIALECT, get_dialect
from open_agent_compiler.errors import ArtifactNotFound, OacError
from open_agent_compiler.model.core.capabilities import Capabilities
from open_agent_compiler.model.names import check_relative_path


class AgentArtifact(BaseModel):
    model_config = ConfigDict(frozen=True)

    name: str
    dialect: str
    path: Path
    config: dict[str, Any]
    body: str

    @property
    def agent_name(self) -> str:
        """`name`, under the public package's field name."""
        return self.name

    @property
    def model(self) -> str | None:
        """The model the compiled file names (frontmatter `model`, Codex's `model`); None when it names none."""
        value = self.config.get("model")
        return value if isinstance(value, str) else None


def list_agent_artifacts(build_dir: str | Path, dialect: str = DEFAULT_DIALECT) -> list[str]:
    """Names of the compiled agents of `dialect` under `build_dir`, sorted; [] when there are none."""
    spec = get_dialect(dialect)
    root = Path(build_dir) / spec.agents_dir
    if not root.is_dir():
        return []
    return sorted(
        path.relative_to(root).as_posix()[: -len(spec.agent_suffix)]
        for path in root.rglob(f"*{spec.agent_suffix}")
        if path.is_file()
    )


def load_agent_artifact(build_dir: str | Path, name: str, dialect: str = DEFAULT_DIALECT) -> AgentArtifact:
    spec = get_dialect(dialect)
    check_relative_path(name, "agent name")
    directory = Path(build_dir) / spec.agents_dir
    path = directory / f"{name}{spec.agent_suffix}"
    try:
        data = path.read_bytes()
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
        known = ", ".join(list_agent_artifacts(build_dir, dialect)) or "none"
        raise ArtifactNotFound(f"no {dialect} agent {name!r} at {path} (found: {known})") from None
    except OSError as exc:
        raise OacError(f"cannot read {path}: {exc.strerror}") from None
    config, body = spec.parse_agent(str(path), data)
    return AgentArtifact(name=name, dialect=dialect, path=path, config=config, body=body)


def load_capabilities(build_dir: str | Path, name: str, dialect: str = DEFAULT_DIALECT) -> Capabilities:
    """What the compiled agent `name` may do, read from the files on disk (agent file, plus settings)."""
    spec = get_dialect(dialect)
    check_relative_path(name, "agent name")
    root = Path(build_dir)
    files: dict[str, bytes] = {}
    for rel in spec.capability_files(name):
        try:
            files[rel] = (root / rel).read_bytes()
        except FileNotFoundError:
            continue
        except OSError as exc:
            raise OacError(f"cannot read {root / rel}: {exc.strerror}") from None
    if spec.capability_files(name)[0] not in files:
        load_agent_artifact(build_dir, name, dialect)  # raises the not-found error with the known names
    return spec.capabilities(name, files)
