"""Invokers run agent tests: `scripted` (in-process simulator), real harnesses against a loopback scripted model
(`opencode`, `claude`, `codex`), or a user's own (`module:factory`). See docs/agent-tests.md."""
