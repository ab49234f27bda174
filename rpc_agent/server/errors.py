"""Errors on the wire: raise :class:`RpcError` from a handler to send exactly that error.

The codes and their meaning are protocol facts (``rpc_agent.protocol.errors``) and RpcError is
shared with the ACP front (``rpc_agent.methods.errors``); both are re-exported here for the
server's modules. Whatever a handler raises, the client gets an error
response carrying its request id.
"""

from __future__ import annotations

from rpc_agent.methods.errors import RpcError
from rpc_agent.protocol.errors import (
    AGENT_BUSY,
    CANCELLED,
    CHECKPOINT_FAILED,
    ENTRY_NOT_FOUND,
    ERROR_CODES,
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    INVALID_SESSION_FILE,
    METHOD_NOT_FOUND,
    NO_CHECKPOINT,
    NOT_AVAILABLE,
    NOTHING_TO_COMPACT,
    PARSE_ERROR,
    PERSISTENCE_FAILED,
    PROVIDER_ERROR,
    PROVIDER_NOT_CONFIGURED,
    RESTORE_CONFLICT,
    SESSION_LOCKED,
    SESSION_NOT_FOUND,
    ErrorCode,
)

__all__ = [
    "AGENT_BUSY",
    "CANCELLED",
    "CHECKPOINT_FAILED",
    "ENTRY_NOT_FOUND",
    "ERROR_CODES",
    "INTERNAL_ERROR",
    "INVALID_PARAMS",
    "INVALID_REQUEST",
    "INVALID_SESSION_FILE",
    "METHOD_NOT_FOUND",
    "NOTHING_TO_COMPACT",
    "NOT_AVAILABLE",
    "NO_CHECKPOINT",
    "PARSE_ERROR",
    "PERSISTENCE_FAILED",
    "PROVIDER_ERROR",
    "PROVIDER_NOT_CONFIGURED",
    "RESTORE_CONFLICT",
    "SESSION_LOCKED",
    "SESSION_NOT_FOUND",
    "ConnectionClosedError",
    "ErrorCode",
    "RpcError",
]


class ConnectionClosedError(Exception):
    """The client closed its side (EOF on stdin) before answering a server-to-client request."""
