"""Inside the handler's own process: load a handler script, find the ScriptTool named like the tool, run it.

A request is `{"tool": NAME, "scripts": [{"path": P} | {"source": S, "label": L}], "input": {...},
"project_root": R}`; the answer `{"ok": true, "output": ...}` or `{"ok": false, "error": "..."}`. `serve` runs
in a forked child, `main` in a spawned interpreter (request on stdin). Both answer on a pipe of their own and
send everything the handler prints (stdout and stderr, its children's too) to the output pipe: nothing the
handler or its children print can be taken for the answer. Both run the handler as production runs it: cwd =
project root, the script's own folder first on sys.path, the project root after it.
"""

import json
import os
import sys
import traceback
import types
from pathlib import Path
from typing import Any

from open_agent_compiler.model.resource_handle import RESOURCES_ENV
from open_agent_compiler.model.script_tool import ScriptTool
from open_agent_compiler.usercode import loader, project_imports
from open_agent_compiler.execution.keeper import FRAME, READY


def _load(script: dict[str, Any], index: int) -> types.ModuleType:
    """Through the one loader for user code: from source (never a stale .pyc), imports and reads recorded."""
    name = f"_oac_handler_{index}"
    if "path" in script:
        return loader.load_path(name, script["path"])
    return loader.exec_source(name, script["source"], script.get("label", name))


def _find_tool(modules: list[types.ModuleType], tool_name: str) -> type[ScriptTool] | None:
    for module in modules:
        for value in vars(module).values():
            if (isinstance(value, type) and issubclass(value, ScriptTool) and value is not ScriptTool
                    and value.name == tool_name):
                return value
    return None


def bind_resources(request: dict[str, Any]) -> None:
    """`$OAC_RESOURCES_JSON` as the request carries it (set, or unset when the run has none), so `ScriptTool`
    reads the resources the way the script run as a command does."""
    if "resources" not in request:
        return
    if request["resources"] is None:
        os.environ.pop(RESOURCES_ENV, None)
    else:
        os.environ[RESOURCES_ENV] = str(request["resources"])


def handle(request: dict[str, Any]) -> dict[str, Any]:
    """Run the request's handler once; never raises."""
    try:
        bind_resources(request)
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


def prepare(request: dict[str, Any]) -> None:
    """cwd and sys.path as when the script runs on its own (`python path/to/script.py` from the project root)."""
    root = str(request["project_root"])
    os.chdir(root)
    folders = [os.path.dirname(os.path.abspath(s["path"])) for s in request["scripts"] if "path" in s]
    front = list(dict.fromkeys([*folders, root]))
    sys.path[:] = front + [p for p in sys.path if p not in front]


def _answer(result: dict[str, Any], answer_fd: int) -> None:
    """Framed (length first), after the handler's own output is flushed: the keeper acts on it at once."""
    sys.stdout.flush()
    sys.stderr.flush()
    data = json.dumps(result, default=str).encode()
    with open(answer_fd, "wb", closefd=False) as pipe:
        pipe.write(FRAME.pack(len(data)) + data)


def serve(request: dict[str, Any], answer_fd: int, output_fd: int) -> None:
    """In a forked handler child: prints go to `output_fd`, the answer to `answer_fd`; never returns."""
    try:
        os.dup2(output_fd, 1)
        os.dup2(output_fd, 2)
        sys.stdout = sys.stderr = open(output_fd, "w", buffering=1, closefd=False)
        prepare(request)
        _answer(handle(request), answer_fd)
        sys.stderr.flush()
    finally:
        os._exit(0)


def main(argv: list[str] | None = None) -> int:
    """A spawned handler: the answer goes to `--answer-fd N` (a pipe) or `--answer-file PATH`; stdout is joined
    to stderr at the descriptor level."""
    args = sys.argv[1:] if argv is None else argv
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    request = json.loads(sys.stdin.read())
    answer_fd = int(args[args.index("--answer-fd") + 1]) if "--answer-fd" in args else -1
    if answer_fd >= 0:
        os.write(answer_fd, READY)  # started: the handler's timeout counts from here
    prepare(request)
    result = handle(request)
    if answer_fd >= 0:
        _answer(result, answer_fd)
    else:
        with open(args[args.index("--answer-file") + 1], "w", encoding="utf-8") as answer:
            answer.write(json.dumps(result, default=str))
    sys.stderr.flush()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
