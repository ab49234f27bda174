"""Error answers shared by both fronts: :class:`RpcError` carries a code and data, and
:func:`map_error` gives each error of ours its documented code.

The JSON-RPC front sends an RpcError as the error object of its response; the ACP front sends
it as an ACP ``RequestError`` with the same code, message and data.
"""

from __future__ import annotations

from typing import Any

from rpc_agent.errors import AgentError
from rpc_agent.protocol.errors import ERROR_CODES


class RpcError(Exception):
    """An error answer for a request: raise it from a handler to send exactly this error.

    ``data`` must be JSON-encodable (anything orjson cannot encode is sent as its ``str``);
    ``None`` leaves ``data`` out of the error object.
    """

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data

    def __str__(self) -> str:
        return self.message

    def __repr__(self) -> str:
        return f"RpcError({self.code}, {self.message!r}, {self.data!r})"


def map_error(exc: BaseException) -> RpcError | None:
    """An error of ours to its documented code; None for anything else, which the front
    answers as an internal error (a bug of ours is never the client's fault)."""
    if isinstance(exc, RpcError):
        return exc
    if isinstance(exc, AgentError):
        return RpcError(ERROR_CODES[exc.kind].code, str(exc), exc.data())
    return None
