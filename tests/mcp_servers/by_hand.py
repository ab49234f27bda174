"""What both hand-written test MCP servers answer alike: the handshake, and a method they do
not have. Each server is run as a script from this folder, so it imports this module by name."""

from __future__ import annotations

from typing import Any

JsonDict = dict[str, Any]


def handshake(method: str, params: JsonDict, server: str) -> JsonDict | None:
    """The result of ``initialize`` (the client's protocol version taken, tools offered) or
    ``ping``; None for any other method."""
    if method == "initialize":
        return {
            "protocolVersion": params["protocolVersion"],
            "capabilities": {"tools": {"listChanged": False}},
            "serverInfo": {"name": server, "version": "1"},
        }
    if method == "ping":
        return {}
    return None


def no_method(method: str) -> JsonDict:
    """The error of a request for a method the server does not have."""
    return {"code": -32601, "message": f"no method {method}"}
