"""The Python client answering the server's requests as a JSON-RPC server (jsonrpcserver):
results, unknown methods, bad params and failing handlers each get their JSON-RPC answer."""

from __future__ import annotations

from typing import Any

import pytest

from rpc_agent_client._serving import answer

pytestmark = pytest.mark.anyio

JsonDict = dict[str, Any]


def request(method: str, params: Any, request_id: int = 7) -> JsonDict:
    return {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}


async def allow(params: JsonDict) -> JsonDict:
    return {"decision": "allow", "tool": params["toolName"]}


APPROVAL = {"toolName": "bash", "toolCallId": "call_1", "arguments": {"command": "ls"}}


async def test_a_handled_request_gets_its_result() -> None:
    reply = await answer(request("approval/request", APPROVAL), {"approval/request": allow})
    assert reply == {"jsonrpc": "2.0", "id": 7, "result": {"decision": "allow", "tool": "bash"}}


async def test_a_sync_handler_answers_as_well() -> None:
    handlers = {"hook/input": lambda params: {"action": "continue", "seen": params["text"]}}
    reply = await answer(request("hook/input", {"type": "input", "text": "hi"}), handlers)
    assert reply is not None
    assert reply["result"] == {"action": "continue", "seen": "hi"}


async def test_a_method_without_a_handler_is_not_found() -> None:
    reply = await answer(request("hook/context", {"type": "context", "messages": []}), {})
    assert reply is not None
    assert reply["id"] == 7
    assert reply["error"]["code"] == -32601


async def test_params_the_protocol_does_not_allow_are_invalid_params() -> None:
    calls: list[JsonDict] = []

    def record(params: JsonDict) -> JsonDict:
        calls.append(params)
        return {"content": []}

    reply = await answer(request("tool/call", {"name": 3, "arguments": {}}), {"tool/call": record})
    assert reply is not None
    assert reply["error"]["code"] == -32602
    assert "name" in reply["error"]["data"]
    assert "toolCallId" in reply["error"]["data"]
    assert calls == []  # the handler never saw them


async def test_params_given_as_an_array_are_invalid_params() -> None:
    reply = await answer(request("approval/request", ["bash"]), {"approval/request": allow})
    assert reply is not None
    assert reply["error"]["code"] == -32602


async def test_a_handler_that_raises_is_an_internal_error_naming_why() -> None:
    def broken(params: JsonDict) -> JsonDict:
        raise RuntimeError("the editor went away")

    reply = await answer(request("approval/request", APPROVAL), {"approval/request": broken})
    assert reply is not None
    assert reply["error"] == {"code": -32603, "message": "the editor went away"}
