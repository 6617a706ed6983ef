"""`python -m open_agent_compiler` is `oac`."""

from open_agent_compiler.cli import main

main()
