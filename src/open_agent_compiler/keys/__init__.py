"""What is remembered to skip a green test: a test's key (a digest over everything that can change its result,
kept as named parts for `--explain`) and the per-agent key cache. Imports `testing` (what a test is) and below."""
