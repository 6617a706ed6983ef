"""One module per evaluator kind. Each class registers itself by `kind` when its module is imported;
`open_agent_compiler.testing.evaluation` imports them all and holds the table. Modules starting with `_` are
shared helpers, not kinds."""
