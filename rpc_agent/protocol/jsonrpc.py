"""The JSON-RPC 2.0 envelope of what the fronts write: answers, and the server's own requests.

What comes in stays a plain JSON object until a front has checked it (any method, params of
any shape); what goes out is one of these. They are TypedDicts, not models: a response is
built and written for every request, and a dict costs nothing on top of writing it.
"""

from typing import Any, Literal, NotRequired, TypedDict


class ErrorObject(TypedDict):
    code: int
    message: str
    data: NotRequired[Any]


class ErrorReply(TypedDict):
    jsonrpc: Literal["2.0"]
    error: ErrorObject
    id: Any
    """The request's id, or None when it could not be read."""


class SuccessReply(TypedDict):
    jsonrpc: Literal["2.0"]
    result: Any
    id: Any


Reply = SuccessReply | ErrorReply
"""A response to one request."""


class Outgoing(TypedDict):
    """A request (with ``id``) or notification the server sends the client."""

    jsonrpc: Literal["2.0"]
    method: str
    id: NotRequired[int]
    params: NotRequired[Any]
