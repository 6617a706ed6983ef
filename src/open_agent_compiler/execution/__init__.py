"""How user code and programs run safely: real tool handlers in their own processes (a forked zygote, one
keeper per run that owns every process a test starts), the one deadline, process trees and the leftovers of an
engine that died. Imports `model` and `usercode`; knows nothing of tests, keys or doit."""
