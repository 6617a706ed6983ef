"""Invokers run agent tests: `scripted` (in-process simulator), real harnesses against a loopback scripted model
(`opencode`, `claude`, `codex`, `pi`), or a user's own (`module:factory`). See docs/agent-tests.md."""
