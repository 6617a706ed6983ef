"""Pure data: definitions, tests, the registry and config resolution."""
