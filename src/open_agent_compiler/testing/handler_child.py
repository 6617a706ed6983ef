"""Inside the handler's own process: load a handler script, find the ScriptTool named like the tool, run it.

A request is `{"tool": NAME, "scripts": [{"path": P} | {"source": S, "label": L}], "input": {...}}`; the answer
`{"ok": true, "output": ...}` or `{"ok": false, "error": "..."}`. `handle` serves a forked child; `main` serves a
spawned interpreter (request on stdin, answer as the last line of stdout, the handler's prints on stderr).
"""

import importlib.util
import json
import os
import sys
import traceback
import types
from pathlib import Path
from typing import Any

from open_agent_compiler.model.script_tool import ScriptTool
from open_agent_compiler.testing import project_imports


def _load(script: dict[str, Any], index: int) -> types.ModuleType:
    name = f"_oac_handler_{index}"
    if "path" in script:
        spec = importlib.util.spec_from_file_location(  # from source, never a stale .pyc; its imports recorded
            name, script["path"], loader=project_imports.source_loader(name, script["path"]))
        if spec is None or spec.loader is None:
            raise ImportError(f"cannot load {script['path']}")
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
        return module
    module = types.ModuleType(name)
    module.__file__ = script.get("label", name)
    sys.modules[name] = module
    exec(compile(script["source"], module.__file__, "exec"), module.__dict__)  # noqa: S102 - the user's handler
    return module


def _find_tool(modules: list[types.ModuleType], tool_name: str) -> type[ScriptTool] | None:
    for module in modules:
        for value in vars(module).values():
            if (isinstance(value, type) and issubclass(value, ScriptTool) and value is not ScriptTool
                    and value.name == tool_name):
                return value
    return None


def handle(request: dict[str, Any]) -> dict[str, Any]:
    """Run the request's handler once; never raises."""
    try:
        project_imports.install(Path(request.get("project_root") or os.getcwd()))
        with project_imports.tracking() as loaded:
            modules = [_load(script, i) for i, script in enumerate(request["scripts"])]
            tool_class = _find_tool(modules, request["tool"])
            if tool_class is None:
                labels = ", ".join(s.get("path") or s.get("label", "?") for s in request["scripts"])
                result = {"ok": False, "error": f"no ScriptTool subclass named {request['tool']!r} in {labels}"}
            else:
                result = {"ok": True, "output": tool_class().call(request["input"])}
        result["imported"] = project_imports.files_of(loaded)
    except BaseException as exc:  # noqa: BLE001 - any handler failure is reported, not raised
        frames = traceback.extract_tb(exc.__traceback__)
        where = f" (at {os.path.basename(frames[-1].filename)}:{frames[-1].lineno} in {frames[-1].name})" if frames else ""
        result = {"ok": False, "error": f"{type(exc).__name__}: {' '.join(str(exc).split())}{where}"}
    return result


def main() -> int:
    answer = os.fdopen(os.dup(sys.stdout.fileno()), "w")
    sys.stdout = sys.stderr
    result = handle(json.loads(sys.stdin.read()))
    answer.write(json.dumps(result, default=str) + "\n")
    answer.flush()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
