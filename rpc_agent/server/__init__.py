"""The JSON-RPC front: line transport, router and error codes (nothing about sessions here).

Wiring a server::

    reader, writer = open_stdio()
    async with writer:
        router = Router(registry, writer, error_mapper=map_error)
        await router.serve(reader)
"""

from .errors import ERROR_CODES, ConnectionClosedError, ErrorCode, RpcError
from .registry import MethodRegistry, MethodSpec
from .router import Router
from .transport import LineReader, LineWriter, open_stdio

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
