"""The JSON-RPC front: line transport, router and error codes (nothing about sessions here).

Wiring a server::

    reader, writer = open_stdio()
    async with writer:
        router = Router(registry, writer, error_mapper=map_error)
        await router.serve(reader)
"""

from rpc_agent.methods.registry import MethodRegistry, MethodSpec
from rpc_agent.server.errors import ERROR_CODES, ConnectionClosedError, ErrorCode, RpcError
from rpc_agent.server.router import Router
from rpc_agent.server.transport import LineReader, LineWriter, open_stdio

__all__ = [
    "ERROR_CODES",
    "ConnectionClosedError",
    "ErrorCode",
    "LineReader",
    "LineWriter",
    "MethodRegistry",
    "MethodSpec",
    "Router",
    "RpcError",
    "open_stdio",
]
