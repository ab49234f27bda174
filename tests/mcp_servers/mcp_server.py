"""A small MCP server for the tests, written with the same SDK (FastMCP).

``python mcp_server.py [stdio | http PORT] [--sleep SECONDS]``: stdio by default; ``http`` serves
streamable HTTP on 127.0.0.1:PORT at ``/mcp``; ``--sleep`` delays start-up (a slow server); ``$MCP_TEST_PID_FILE`` gets its process id.
Tools: ``echo`` (text), ``pid`` (read-only, the server's process id), ``picture`` (text and a
PNG), ``resources`` (an embedded text resource and a resource link), ``crash`` (the process
exits in the middle of the call), ``exit_soon`` (exits just after answering).
"""

from __future__ import annotations

import os
import sys
import threading
import time

if os.environ.get("MCP_TEST_PID_FILE"):  # first thing: before the SDK's second of imports
    with open(os.environ["MCP_TEST_PID_FILE"], "w") as out:
        out.write(str(os.getpid()))

from mcp.server.fastmcp import FastMCP
from mcp.types import (
    EmbeddedResource,
    ImageContent,
    ResourceLink,
    TextContent,
    TextResourceContents,
    ToolAnnotations,
)
from pydantic import AnyUrl

PNG_1X1 = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="

server = FastMCP("test-server", host="127.0.0.1", log_level="WARNING")


@server.tool(description="Say the text back.")
def echo(text: str) -> str:
    return f"echo: {text}"


@server.tool(description="The server's process id.", annotations=ToolAnnotations(readOnlyHint=True))
def pid() -> str:
    return str(os.getpid())


@server.tool(description="A caption and a picture.")
def picture() -> list[TextContent | ImageContent]:
    return [
        TextContent(type="text", text="a red dot"),
        ImageContent(type="image", data=PNG_1X1, mimeType="image/png"),
    ]


@server.tool(description="A document and a link.")
def resources() -> list[EmbeddedResource | ResourceLink]:
    return [
        EmbeddedResource(
            type="resource",
            resource=TextResourceContents(uri=AnyUrl("file:///notes.txt"), text="remember the milk"),
        ),
        ResourceLink(type="resource_link", name="spec", uri=AnyUrl("https://example.com/spec")),
    ]


@server.tool(description="Exit in the middle of the call.")
def crash() -> str:
    sys.stderr.write("test server: crashing on purpose\n")
    sys.stderr.flush()
    os._exit(3)


@server.tool(description="Answer, then exit a moment later.")
def exit_soon() -> str:
    threading.Timer(0.2, os._exit, args=(0,)).start()
    return "bye"


def main(argv: list[str]) -> None:
    if "--sleep" in argv:
        index = argv.index("--sleep")
        time.sleep(float(argv[index + 1]))
        del argv[index : index + 2]
    if argv and argv[0] == "http":
        server.settings.port = int(argv[1])
        server.run(transport="streamable-http")
    else:
        server.run(transport="stdio")


if __name__ == "__main__":
    main(sys.argv[1:])
