"""The two ways a call can fail: the server said no, or the server is gone."""

from __future__ import annotations

from typing import Any


class RpcCallError(Exception):
    """The server answered a call with a JSON-RPC error."""

    def __init__(self, method: str, code: int, message: str, data: Any = None) -> None:
        super().__init__(f"{method}: {message} (code {code})")
        self.method = method
        self.code = code
        self.message = message
        self.data = data


class ServerExitedError(Exception):
    """The server process ended while a call was waiting for its answer."""
