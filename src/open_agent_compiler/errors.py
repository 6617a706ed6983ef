"""User-facing errors: each one becomes a single line and exit code 2 at the CLI."""


class OacError(Exception):
    """Bad input the user can fix. The message names the culprit in one line."""

    exit_code = 2


class RegistryError(OacError, ValueError):  # ValueError: what the public package raises here
    """A registry is inconsistent: duplicates, unknown references, missing templates."""


class UsageError(OacError, ValueError):  # ValueError: what the public package raises (pydantic) here
    """A call's arguments cannot go together or name something unknown (e.g. `CompileScript(...)`)."""


class UnsafeNameError(OacError):  # not a ValueError: raised inside validators, pydantic would rewrap it
    """A name or path would escape the target directory or break a file format."""


class FactoryError(OacError, ValueError):
    """A `module:callable` factory spec could not produce a registry."""


class ArtifactNotFound(OacError, FileNotFoundError):  # FileNotFoundError: what the public package raises here
    """A compiled agent that is not in the build directory."""

    def __str__(self) -> str:  # the one line given, not OSError's "[Errno …]" form
        return str(self.args[0]) if self.args else ""


class UnknownDialect(OacError, ValueError):  # ValueError: what the public package raises here
    """A dialect name that is not in the table."""


class ResultsError(OacError):
    """A results file or state store cannot be used."""


class NothingSelected(OacError):
    """A run would test nothing: no test matches the selection, or the config has none."""
