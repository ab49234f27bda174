"""A small MCP server for the tests.

``python mcp_server.py [stdio | sdk-stdio | http PORT | sdk-http PORT] [--sleep SECONDS]``: stdio
by default (answered by hand, no SDK import: fast to start); ``sdk-stdio`` serves stdio with the
SDK; ``http`` and ``sdk-http`` serve streamable HTTP on 127.0.0.1:PORT at ``/mcp``, by hand and
with the SDK; ``--sleep`` delays start-up (a slow server); ``$MCP_TEST_PID_FILE`` gets its process id.
Tools: ``echo`` (text), ``pid`` (read-only, the server's process id), ``picture`` (text and a
PNG), ``resources`` (an embedded text resource and a resource link), ``crash`` (the process
exits in the middle of the call), ``exit_soon`` (exits just after answering).

With the SDK the tools are served by its FastMCP (a server written with the same SDK as our
client). By hand the server answers the few requests a client makes without the SDK: it takes
most of a second to import, and the tests start a score of servers (each is a process with its
own life: they crash, exit, hang at start, get replaced).
"""

from __future__ import annotations

import inspect
import json
import os
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

if __name__ == "__main__":  # a script: the tests' folder is where its sibling is found
    sys.path.insert(0, str(Path(__file__).parents[1]))

from mcp_servers.by_hand import JsonDict, handshake, no_method

if os.environ.get("MCP_TEST_PID_FILE"):  # first thing: before the SDK's second of imports
    with open(os.environ["MCP_TEST_PID_FILE"], "w") as out:
        out.write(str(os.getpid()))


PNG_1X1 = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="


def text(value: str) -> JsonDict:
    return {"type": "text", "text": value}


# --- the tools: each returns its content blocks (MCP's JSON shapes) ------------------------------


def echo(text: str) -> list[JsonDict]:
    return [{"type": "text", "text": f"echo: {text}"}]


def pid() -> list[JsonDict]:
    return [text(str(os.getpid()))]


def picture() -> list[JsonDict]:
    return [text("a red dot"), {"type": "image", "data": PNG_1X1, "mimeType": "image/png"}]


def resources() -> list[JsonDict]:
    return [
        {"type": "resource", "resource": {"uri": "file:///notes.txt", "text": "remember the milk"}},
        {"type": "resource_link", "name": "spec", "uri": "https://example.com/spec"},
    ]


def crash() -> list[JsonDict]:
    sys.stderr.write("test server: crashing on purpose\n")
    sys.stderr.flush()
    os._exit(3)


def exit_soon() -> list[JsonDict]:
    threading.Timer(0.2, os._exit, args=(0,)).start()
    return [text("bye")]


@dataclass(frozen=True)
class ToolSpec:
    run: Callable[..., list[JsonDict]]
    description: str
    read_only: bool = False

    @property
    def name(self) -> str:
        return self.run.__name__

    def input_schema(self) -> JsonDict:
        """Every argument of these tools is a required string."""
        names = list(inspect.signature(self.run).parameters)
        return {"type": "object", "properties": {n: {"type": "string"} for n in names}, "required": names}


TOOLS = [
    ToolSpec(echo, "Say the text back."),
    ToolSpec(pid, "The server's process id.", read_only=True),
    ToolSpec(picture, "A caption and a picture."),
    ToolSpec(resources, "A document and a link."),
    ToolSpec(crash, "Exit in the middle of the call."),
    ToolSpec(exit_soon, "Answer, then exit a moment later."),
]


# --- stdio, by hand --------------------------------------------------------------------------------


def answer(method: str, params: JsonDict) -> JsonDict:
    shaken = handshake(method, params, "test-server")
    if shaken is not None:
        return shaken
    if method == "tools/list":
        return {
            "tools": [
                {"name": tool.name, "description": tool.description, "inputSchema": tool.input_schema()}
                | ({"annotations": {"readOnlyHint": True}} if tool.read_only else {})
                for tool in TOOLS
            ]
        }
    if method == "tools/call":
        (tool,) = [t for t in TOOLS if t.name == params["name"]]
        return {"content": tool.run(**params.get("arguments", {})), "isError": False}
    raise LookupError(method)


def respond(message: JsonDict) -> JsonDict:
    """The answer to a request."""
    reply: JsonDict = {"jsonrpc": "2.0", "id": message["id"]}
    try:
        reply["result"] = answer(message["method"], message.get("params") or {})
    except LookupError:
        reply["error"] = no_method(message["method"])
    return reply


def serve_stdio() -> None:
    for line in sys.stdin:
        message = json.loads(line)
        if "id" not in message:
            continue  # a notification (initialized, cancelled): nothing to answer
        sys.stdout.write(json.dumps(respond(message)) + "\n")
        sys.stdout.flush()


# --- streamable HTTP, by hand ---------------------------------------------------------------------


def serve_http(port: int) -> None:
    """Streamable HTTP at its plainest: each request POSTed gets its answer as a JSON body, a
    notification 202; no session id and no stream of the server's own (GET and DELETE: 405)."""
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            pass  # the tests read their own logs, not a line per request

        def reply(self, status: int, body: bytes = b"") -> None:
            self.send_response(status)
            if body:
                self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_POST(self) -> None:
            message = json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0"))))
            if "id" not in message:
                self.reply(202)
            else:
                self.reply(200, json.dumps(respond(message)).encode())

        def do_GET(self) -> None:
            self.reply(405)

        def do_DELETE(self) -> None:
            self.reply(405)

    ThreadingHTTPServer(("127.0.0.1", port), Handler).serve_forever()


# --- with the SDK: HTTP, or stdio -----------------------------------------------------------------


def serve_with_sdk(transport: Literal["stdio", "streamable-http"], port: int = 0) -> None:
    from mcp.server.fastmcp import FastMCP
    from mcp.types import ContentBlock, ToolAnnotations
    from pydantic import TypeAdapter

    blocks = TypeAdapter(list[ContentBlock])
    server = FastMCP("test-server", host="127.0.0.1", port=port, log_level="WARNING")
    for tool in TOOLS:
        server.add_tool(
            _with_sdk_types(tool.run, blocks),
            name=tool.name,
            description=tool.description,
            annotations=ToolAnnotations(readOnlyHint=True) if tool.read_only else None,
            structured_output=False,
        )
    server.run(transport=transport)


def _with_sdk_types(run: Callable[..., list[JsonDict]], blocks: Any) -> Callable[..., Any]:
    """The tool with its signature (FastMCP derives the input schema from it), returning the
    SDK's content models."""

    def tool(**arguments: Any) -> Any:
        return blocks.validate_python(run(**arguments))

    tool.__signature__ = inspect.signature(run).replace(return_annotation=inspect.Signature.empty)  # type: ignore[attr-defined]
    return tool


def main(argv: list[str]) -> None:
    if "--sleep" in argv:
        index = argv.index("--sleep")
        time.sleep(float(argv[index + 1]))
        del argv[index : index + 2]
    if argv and argv[0] == "http":
        serve_http(int(argv[1]))
    elif argv and argv[0] == "sdk-http":
        serve_with_sdk("streamable-http", int(argv[1]))
    elif argv and argv[0] == "sdk-stdio":
        serve_with_sdk("stdio")
    else:
        serve_stdio()


if __name__ == "__main__":
    main(sys.argv[1:])
