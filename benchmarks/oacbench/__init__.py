"""Helpers of the `oac test` benchmark (benchmarks/run.py). Standard library only: runs under any Python ≥ 3.11."""
