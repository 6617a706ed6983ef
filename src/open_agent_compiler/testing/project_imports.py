"""Moved to `open_agent_compiler.usercode.project_imports` (one loader for user code); kept so old imports work."""

from open_agent_compiler.usercode.project_imports import (  # noqa: F401
    files_of, install, loaded_files, loaded_project_files, note_files, source_loader, tracking,
)
