"""The conversion as the tests run it, and the API blocks they expect back.

``convert`` checks every conversion a test makes against the fake API's request rules, so each
test also shows that its history gives a request the API accepts."""

from __future__ import annotations

from typing import Any

from fake_anthropic import validate_request
from providers.stored_messages import MODEL, JsonDict, text
from rpc_agent.protocol.shapes import MessageDict
from rpc_agent.providers.convert import MISSING_RESULT_TEXT, convert_messages


def convert(messages: list[MessageDict], **kwargs: Any) -> list[JsonDict]:
    """The converted messages, as the JSON the API gets (and the tests look into)."""
    kwargs.setdefault("cache", False)
    body: JsonDict = {"model": MODEL, "max_tokens": 1000}
    body["messages"] = convert_messages(messages, model_id=MODEL, **kwargs)
    problem = validate_request(body)
    assert problem is None, problem
    converted: list[JsonDict] = body["messages"]
    return converted


def tool_result_block(call_id: str, output: str = "ok", *, error: bool = False) -> JsonDict:
    block: JsonDict = {"type": "tool_result", "tool_use_id": call_id, "content": [text(output)]}
    if error:
        block["is_error"] = True
    return block


MISSING = {
    "type": "tool_result",
    "tool_use_id": "",
    "content": [text(MISSING_RESULT_TEXT)],
    "is_error": True,
}


def missing(call_id: str) -> JsonDict:
    return {**MISSING, "tool_use_id": call_id}


def roles(messages: list[JsonDict]) -> list[str]:
    return [m["role"] for m in messages]


def all_blocks(messages: list[JsonDict]) -> list[JsonDict]:
    return [block for m in messages for block in m["content"]]
