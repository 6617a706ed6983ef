# tests/mutation/mutants.py is a script (the mutation audit's runner), not a test module.
collect_ignore = ["mutants.py"]
