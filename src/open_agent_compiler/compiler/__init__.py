"""Compile a resolved config into harness files, in memory; `writer` is the one module that touches disk."""
