"""`python -m open_agent_compiler` is `oac`. Importing this module runs nothing."""

from open_agent_compiler.cli import main

if __name__ == "__main__":
    main()
