"""The client as a JSON-RPC server: the requests the server sends its host (``approval/request``,
``hook/<name>``, ``tool/call``) are dispatched through jsonrpcserver.

Each handler becomes a jsonrpcserver method that answers with a ``Result``: ``Success`` with
what the handler returned, ``InvalidParams`` when the params are not what the protocol's
schema says (the generated types), ``Error`` (-32603) when the handler raised. A method the
client registered no handler for gets jsonrpcserver's "Method not found". Imported on the first
request the server sends, so that a client that answers none never loads jsonrpcserver.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from jsonrpcserver import Error, InvalidParams, Result, Success, async_dispatch_to_serializable
from pydantic import BaseModel, ValidationError

from rpc_agent_client.types import ApprovalRequestParams, HookEvent, ToolCallParams

JsonDict = dict[str, Any]
Handler = Callable[[JsonDict], Awaitable[Any] | Any]
Method = Callable[..., Awaitable[Result]]

INTERNAL_ERROR = -32603


def params_model(name: str) -> type[BaseModel] | None:
    """The protocol's model of a request's params, None for a method it does not define."""
    if name == "approval/request":
        return ApprovalRequestParams
    if name == "tool/call":
        return ToolCallParams
    if name.startswith("hook/"):
        return HookEvent
    return None


def as_method(name: str, handler: Handler) -> Method:
    """``handler`` (params in, result out, sync or async) as a jsonrpcserver method."""
    model = params_model(name)

    async def method(*args: Any, **params: Any) -> Result:
        if args:
            return InvalidParams(f"{name} takes its params as an object, not an array")
        if model is not None:
            try:
                model.model_validate(params)
            except ValidationError as exc:
                return InvalidParams(_problems(exc))
        try:
            value = handler(params)
            if inspect.isawaitable(value):
                value = await value
        except Exception as exc:
            return Error(INTERNAL_ERROR, str(exc) or type(exc).__name__)
        return Success(value)

    return method


def _problems(exc: ValidationError) -> str:
    return "; ".join(
        f"{'.'.join(str(part) for part in error['loc']) or 'params'}: {error['msg']}"
        for error in exc.errors()
    )


async def answer(message: JsonDict, handlers: Mapping[str, Handler]) -> JsonDict | None:
    """The response to one request the server sent (None: nothing to send, a notification)."""
    methods = {name: as_method(name, handler) for name, handler in handlers.items()}
    response = await async_dispatch_to_serializable("", methods, deserializer=lambda _text: message)
    return response if isinstance(response, dict) else None
