"""The script files JSON tools ship (`ToolDefinition.scripts()`), as compiled files.

Inline `script_contents` is used as is; `source_file_path` is read relative to `source_root` (the one input
the compiler reads). Every target path is checked before anything is returned.
"""

from pathlib import Path

from open_agent_compiler.compiler.output import CompiledFile, check_output_path
from open_agent_compiler.errors import OacError
from open_agent_compiler.model.registry import ResolvedConfig


def _read_source(source: str, root: Path, tool: str) -> bytes:
    path = root / source
    try:
        return path.read_bytes()
    except FileNotFoundError:
        raise OacError(f"tool {tool!r}: script source {source!r} not found under {root}") from None
    except OSError as exc:
        raise OacError(f"tool {tool!r}: cannot read script source {source!r}: {exc.strerror}") from None


def check_script_targets(resolved: ResolvedConfig) -> None:
    """Every script target of the config is a safe output path (characters, length): `oac compile` and `oac test`
    call this right after loading, before either writes anything."""
    for reachable in resolved.tools():
        for script in reachable.tool.scripts():
            check_output_path(script.target_file_path, f"script target of tool {reachable.tool.name!r}")


def script_files(resolved: ResolvedConfig, source_root: Path | None) -> list[CompiledFile]:
    root = source_root if source_root is not None else Path.cwd()
    files: dict[str, tuple[str, CompiledFile]] = {}
    for reachable in resolved.tools():
        tool = reachable.tool
        for script in tool.scripts():
            target = check_output_path(script.target_file_path, f"script target of tool {tool.name!r}")
            if script.script_contents is not None:
                content = script.script_contents.encode("utf-8")
            else:
                content = _read_source(script.source_file_path or "", root, tool.name)
            compiled = CompiledFile(path=target, content=content, executable=content.startswith(b"#!"))
            first = files.setdefault(target, (tool.name, compiled))
            if first[1] != compiled:
                raise OacError(
                    f"tools {first[0]!r} and {tool.name!r} both write script {target!r} with different contents"
                )
    return [compiled for _, compiled in files.values()]
