"""The JSON-RPC 2.0 errors over real pipes (``rpc_test_server.py``): an invalid request, unknown
method, unacceptable params or failing handler gets its code, with the request's id where it is
usable, and the server keeps serving."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from rpc_agent.server import errors as codes
from server.server_testlib import assert_still_serving, running_server, server_in_task

pytestmark = pytest.mark.anyio


# --- invalid requests ---------------------------------------------------------------------------


INVALID_REQUESTS: list[tuple[Any, Any]] = [
    (1, None),
    ("ping", None),
    (None, None),
    ({}, None),
    ({"jsonrpc": "2.0", "id": 5}, 5),
    ({"jsonrpc": "2.0", "id": 5, "params": {}}, 5),
    ({"jsonrpc": "1.0", "id": 6, "method": "ping"}, 6),
    ({"id": 7, "method": "ping"}, 7),
    ({"jsonrpc": 2.0, "id": 8, "method": "ping"}, 8),
    ({"jsonrpc": "2.0", "id": 9, "method": 5}, 9),
    ({"jsonrpc": "2.0", "id": "ten", "method": None}, "ten"),
    ({"jsonrpc": "2.0", "id": {"a": 1}, "method": "ping"}, None),
    ({"jsonrpc": "2.0", "id": [1], "method": "ping"}, None),
    ({"jsonrpc": "2.0", "id": True, "method": "ping"}, None),
    ({"jsonrpc": "2.0", "method": 1, "params": "bar"}, None),  # the spec's own example
]


async def test_invalid_requests_get_invalid_request_with_their_id_when_usable(tmp_path: Path) -> None:
    async with server_in_task(tmp_path) as server:
        for message, expected_id in INVALID_REQUESTS:
            await server.send(message)
            answer = await server.recv()
            assert answer["error"]["code"] == codes.INVALID_REQUEST, message
            assert answer["id"] == expected_id, message
            assert "result" not in answer
        await assert_still_serving(server)


async def test_unknown_method_names_the_method_and_keeps_the_id(tmp_path: Path) -> None:
    async with server_in_task(tmp_path) as server:
        answer = await server.call("no_such_method", request_id=41)
        assert answer["id"] == 41
        assert answer["error"]["code"] == codes.METHOD_NOT_FOUND
        assert "no_such_method" in answer["error"]["message"]


# --- invalid params -----------------------------------------------------------------------------


async def test_params_of_the_wrong_type_get_invalid_params_with_pydantic_errors(tmp_path: Path) -> None:
    async with server_in_task(tmp_path) as server:
        answer = await server.call("typed", {"count": "many", "ratio": "x"}, request_id="t1")
        assert answer["id"] == "t1"
        error = answer["error"]
        assert error["code"] == codes.INVALID_PARAMS
        assert "typed" in error["message"]
        problems = {(tuple(item["loc"]), item["type"]) for item in error["data"]}
        assert problems == {
            (("count",), "int_parsing"),
            (("ratio",), "float_parsing"),
            (("name",), "missing"),
        }
        assert all("url" not in item for item in error["data"])
        await assert_still_serving(server)


async def test_missing_params_are_validated_as_an_empty_object(tmp_path: Path) -> None:
    async with server_in_task(tmp_path) as server:
        answer = await server.call("typed", request_id=3)
        assert answer["error"]["code"] == codes.INVALID_PARAMS
        assert answer["id"] == 3
        answer = await server.call("slow", {"seconds": 0}, request_id=4)
        assert answer["result"] == {"tag": "", "slept": 0.0}


UNACCEPTABLE_PARAMS: list[tuple[str, Any]] = [
    ("typed", "count=1"),
    ("typed", None),
    ("typed", 3),
    ("typed", True),
    ("typed", [1, "n", 1.0, [], "one too many"]),
    ("typed", [1]),  # name is required
    ("ping", {"unexpected": 1}),
    ("ping", [1]),
    ("ping", None),
    ("ping", "x"),
]


async def test_params_that_are_not_acceptable_get_invalid_params(tmp_path: Path) -> None:
    async with server_in_task(tmp_path) as server:
        for index, (method, params) in enumerate(UNACCEPTABLE_PARAMS):
            await server.send({"jsonrpc": "2.0", "id": index, "method": method, "params": params})
            answer = await server.recv()
            assert answer["id"] == index, (method, params)
            assert answer["error"]["code"] == codes.INVALID_PARAMS, (method, params)
        await assert_still_serving(server)


# --- handler failures ---------------------------------------------------------------------------


async def test_rpc_error_from_a_handler_is_sent_as_is(tmp_path: Path) -> None:
    async with server_in_task(tmp_path) as server:
        answer = await server.call("fail_rpc", request_id=5)
        assert answer == {
            "jsonrpc": "2.0",
            "error": {
                "code": codes.AGENT_BUSY,
                "message": "the agent is busy",
                "data": {"hint": "abort first"},
            },
            "id": 5,
        }


async def test_the_error_mapper_turns_domain_errors_into_their_codes(tmp_path: Path) -> None:
    async with server_in_task(tmp_path) as server:
        answer = await server.call("fail_domain", request_id=6)
        assert answer["id"] == 6
        assert answer["error"]["code"] == codes.SESSION_NOT_FOUND
        assert answer["error"]["data"] == {"path": "x.jsonl"}


async def test_an_unexpected_exception_is_an_internal_error_with_the_id(tmp_path: Path) -> None:
    async with running_server(tmp_path) as server:
        for method, text in [("fail_value", "boom"), ("fail_value_inline", "inline boom")]:
            answer = await server.call(method, request_id=f"{method}-1")
            assert answer["id"] == f"{method}-1"
            assert answer["error"]["code"] == codes.INTERNAL_ERROR
            assert f"ValueError: {text}" in answer["error"]["message"]
            assert method in answer["error"]["message"]
        await assert_still_serving(server)
        await server.close_stdin()
        assert await server.wait() == 0
        stderr = server.stderr()
        assert "Traceback" in stderr
        assert "ValueError: boom" in stderr
        assert "ValueError: inline boom" in stderr
