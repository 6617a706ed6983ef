"""A minimal MCP server on stdio (newline-delimited JSON-RPC) with one tool, `echo`, that answers
`MCP-STUB-CALLED`. The harness tests configure it as a project's MCP server to see whether an agent may call
its tools; it touches nothing and opens no socket."""

import json
import sys

TOOL = {"name": "echo", "description": "Answers MCP-STUB-CALLED.", "inputSchema": {"type": "object", "properties": {}}}


def answer(request: dict) -> dict | None:
    method, ident = request.get("method"), request.get("id")
    if ident is None:
        return None  # a notification
    if method == "initialize":
        version = request.get("params", {}).get("protocolVersion", "2025-06-18")
        result = {"protocolVersion": version, "capabilities": {"tools": {}},
                  "serverInfo": {"name": "mcp-stub", "version": "1"}}
    elif method == "tools/list":
        result = {"tools": [TOOL]}
    elif method == "tools/call":
        result = {"content": [{"type": "text", "text": "MCP-STUB-CALLED"}]}
    elif method == "ping":
        result = {}
    else:
        return {"jsonrpc": "2.0", "id": ident, "error": {"code": -32601, "message": f"no method {method}"}}
    return {"jsonrpc": "2.0", "id": ident, "result": result}


for line in sys.stdin:
    if line.strip():
        reply = answer(json.loads(line))
        if reply is not None:
            sys.stdout.write(json.dumps(reply) + "\n")
            sys.stdout.flush()
