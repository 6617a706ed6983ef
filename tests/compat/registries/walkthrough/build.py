"""The build script of step 7: compile the fleet's config once per variant, for OpenCode.

    python build.py TARGET
"""

import sys
from pathlib import Path

from open_agent_compiler.compiler.script import CompileScript

from fleet import VARIANTS, registry

if __name__ == "__main__":
    result = CompileScript(target=Path(sys.argv[1]), factory=registry, config="default", variants=VARIANTS,
                           dialect="opencode").run()
    for path in sorted(str(Path(p).relative_to(sys.argv[1])) for p in result.written_files):
        print(path)
