"""An MCP server asks the user for input (``elicitation/create``): who answers, and how.

Our MCP client declares the elicitation capability (form and URL modes) to every server, and
hands each request to the session's ``Elicit`` callback: the ACP front forwards it to the
editor as ACP elicitation, the JSON-RPC front to a client that declared it as the host request
``elicitation/request``. With nobody to ask (headless mode, a client that declared nothing) the
answer is ``decline``, which the MCP specification gives servers to handle; the user is never
left waiting on a question nobody shows.

These types are the fronts' common ground, free of both the MCP SDK and ACP's; the question
itself is the protocol's ``ElicitationRequestParams``, which the JSON-RPC front sends as it is.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from rpc_agent.protocol.host import ElicitationRequestParams
from rpc_agent.protocol.json_schema import JsonSchema, as_json_schema

ElicitationAction = Literal["accept", "decline", "cancel"]


@dataclass(frozen=True, slots=True)
class ElicitationAnswer:
    action: ElicitationAction
    content: dict[str, Any] | None = None
    """Accepted form mode: the values, as the schema asked for them."""


DECLINE = ElicitationAnswer("decline")

Elicit = Callable[[ElicitationRequestParams], Awaitable[ElicitationAnswer]]

ElicitationDone = Callable[[str, str], Awaitable[None]]
"""Told (server name, elicitation id) when a server says a URL-mode elicitation finished."""


async def nobody_to_tell(server: str, elicitation_id: str) -> None:
    return None


def elicitation_request(
    server: str, params: Any, tool_call_id: str | None
) -> ElicitationRequestParams | None:
    """The MCP SDK's request params as ours (None for a mode we do not know)."""
    mode = getattr(params, "mode", "form")
    message = str(getattr(params, "message", ""))
    if mode == "url":
        return ElicitationRequestParams(
            server=server,
            mode="url",
            message=message,
            url=str(getattr(params, "url", "")),
            elicitationId=str(getattr(params, "elicitationId", "")),
            toolCallId=tool_call_id,
        )
    if mode == "form":
        schema = getattr(params, "requestedSchema", None)
        requested: JsonSchema = (
            as_json_schema(dict(schema)) if isinstance(schema, dict) else {"type": "object", "properties": {}}
        )
        return ElicitationRequestParams(
            server=server, mode="form", message=message, requestedSchema=requested, toolCallId=tool_call_id
        )
    return None


async def decline(request: ElicitationRequestParams) -> ElicitationAnswer:
    """The answer when nobody can be asked."""
    return DECLINE


_SECRET = re.compile(
    r"pass(word|phrase|wd)|secret|credential|(access|auth|bearer|refresh|api|session)[\s_-]?token|^tokens?$"
    r"|api[\s_-]?key|private[\s_-]?key|\botp\b|\bpin\b|\bcvv\b|card[\s_-]?number",
    re.IGNORECASE,
)


def asks_for_secret(schema: Mapping[str, object] | None) -> bool:
    """Whether a form asks for what ACP says form mode must never carry: passwords, keys,
    tokens and the like (by a ``password`` format, or the words of a field's name, title or
    description). Such a request needs URL mode, which only the server that asks can offer."""
    properties = schema.get("properties") if isinstance(schema, dict) else None
    if not isinstance(properties, dict):
        return False
    for name, field in properties.items():
        if isinstance(field, dict) and field.get("format") == "password":
            return True
        words = [str(name)]
        if isinstance(field, dict):
            words += [str(field.get(key) or "") for key in ("title", "description")]
        if any(_SECRET.search(word) for word in words):
            return True
    return False
