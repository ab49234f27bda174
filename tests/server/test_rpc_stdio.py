"""The JSON-RPC 2.0 contract over real pipes: a small server built from the router, driven the
way an editor drives rpc-agent. Every error answer to a request must carry its id, the server
must keep serving after anything, and stdout must only ever carry JSON-RPC lines. Here: ids,
notifications, batches, concurrency and the server's own requests; the lines themselves are in
test_rpc_framing.py, the error answers in test_rpc_errors.py.

The server is a process where the process is the point (EOF, SIGTERM, stderr, writes to fd 1);
elsewhere it is served in the test's event loop over a socket pair (``server_in_task``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from rpc_agent.server import errors as codes
from server.server_testlib import (
    PING,
    assert_still_serving,
    ids_and_codes,
    ping,
    running_server,
    server_in_task,
)

pytestmark = pytest.mark.anyio


# --- requests and ids ---------------------------------------------------------------------------


async def test_a_request_is_answered_with_its_own_id(tmp_path: Path) -> None:
    async with server_in_task(tmp_path) as server:
        for request_id in [1, "abc", 0, -7, 2.5, None, "", 2**53]:
            answer = await server.call("ping", request_id=request_id)
            assert answer == {"jsonrpc": "2.0", "result": {"pong": True}, "id": request_id}


async def test_typed_params_are_validated_and_passed_as_a_model(tmp_path: Path) -> None:
    async with server_in_task(tmp_path) as server:
        answer = await server.call("typed", {"count": 3, "name": "n", "tags": ["a", "b"]})
        assert answer["result"] == {"summary": "n:3:1.0:a,b"}


async def test_positional_params_map_to_the_model_fields_in_order(tmp_path: Path) -> None:
    async with server_in_task(tmp_path) as server:
        answer = await server.call("typed", [4, "p", 0.5])
        assert answer["result"] == {"summary": "p:4:0.5:"}
        answer = await server.call("ping", [], request_id=9)
        assert answer["result"] == {"pong": True}


# --- notifications ------------------------------------------------------------------------------


async def test_notifications_are_never_answered_even_on_error(tmp_path: Path) -> None:
    async with running_server(tmp_path) as server:
        for notification in [
            PING,
            {"jsonrpc": "2.0", "method": "no_such_method"},
            {"jsonrpc": "2.0", "method": "typed", "params": {"count": "x"}},
            {"jsonrpc": "2.0", "method": "typed", "params": "not params"},
            {"jsonrpc": "2.0", "method": "fail_value"},
            {"jsonrpc": "2.0", "method": "fail_value_inline"},
            {"jsonrpc": "2.0", "method": "fail_rpc"},
            {"jsonrpc": "2.0", "method": "slow", "params": {"seconds": 0}},
        ]:
            await server.send(notification)
        # The first line out must be the answer to this request: nothing was sent for the above.
        await assert_still_serving(server)
        await server.close_stdin()
        assert await server.rest() == []
        assert await server.wait() == 0


async def test_server_notifications_are_whole_lines_before_the_answer(tmp_path: Path) -> None:
    async with server_in_task(tmp_path) as server:
        await server.send({"jsonrpc": "2.0", "id": 1, "method": "notify_me", "params": {"text": "hi"}})
        event = await server.recv()
        assert event == {"jsonrpc": "2.0", "method": "event", "params": {"type": "echo", "text": "hi"}}
        assert await server.recv() == {"jsonrpc": "2.0", "result": {}, "id": 1}


# --- batches ------------------------------------------------------------------------------------


async def test_a_batch_is_answered_item_by_item_in_one_line(tmp_path: Path) -> None:
    async with server_in_task(tmp_path) as server:
        batch = [
            ping(1),
            1,
            PING,  # a notification: no entry
            {"jsonrpc": "2.0", "id": 2, "method": "no_such_method"},
            {"jsonrpc": "2.0", "id": 3, "method": "typed", "params": {"count": "x", "name": "n"}},
            {"jsonrpc": "2.0", "id": 4, "method": "slow", "params": {"seconds": 0.01, "tag": "s"}},
            {"jsonrpc": "1.0", "id": 5, "method": "ping"},
            {"jsonrpc": "2.0", "id": 6, "method": "fail_value"},
            {"jsonrpc": "2.0", "method": "fail_value"},  # a failing notification: no entry either
            [ping(7)],  # nested batches are not requests
        ]
        await server.send(batch)
        answer = await server.recv()
        assert isinstance(answer, list)
        assert ids_and_codes(answer) == sorted(
            [
                (1, None),
                (None, codes.INVALID_REQUEST),
                (2, codes.METHOD_NOT_FOUND),
                (3, codes.INVALID_PARAMS),
                (4, None),
                (5, codes.INVALID_REQUEST),
                (6, codes.INTERNAL_ERROR),
                (None, codes.INVALID_REQUEST),
            ],
            key=repr,
        )
        by_id = {item["id"]: item for item in answer if item["id"] is not None}
        assert by_id[4]["result"] == {"tag": "s", "slept": 0.01}
        assert by_id[1]["result"] == {"pong": True}
        await assert_still_serving(server)


async def test_an_empty_batch_gets_one_invalid_request(tmp_path: Path) -> None:
    async with server_in_task(tmp_path) as server:
        await server.send([])
        answer = await server.recv()
        assert answer == {
            "jsonrpc": "2.0",
            "error": {"code": codes.INVALID_REQUEST, "message": "Invalid request: empty batch"},
            "id": None,
        }


async def test_a_batch_of_notifications_gets_no_answer(tmp_path: Path) -> None:
    async with server_in_task(tmp_path) as server:
        await server.send([PING, PING, {"jsonrpc": "2.0", "method": "no_such_method"}])
        await assert_still_serving(server)


# --- concurrency --------------------------------------------------------------------------------


async def test_a_slow_request_does_not_block_an_inline_one_sent_after_it(tmp_path: Path) -> None:
    async with running_server(tmp_path) as server:
        await server.send({"jsonrpc": "2.0", "id": "slow", "method": "slow", "params": {"tag": "long"}})
        await server.send({"jsonrpc": "2.0", "id": "fast", "method": "echo", "params": {"text": "now"}})
        first = await server.recv()
        assert first["id"] == "fast"
        assert first["result"]["text"] == "now"
        assert (await server.call("in_flight", request_id="q"))["result"] == {"requests": [["slow", "slow"]]}
        # SIGTERM: the running request is answered (cancelled) and the server exits 0, stdin still open.
        server.terminate()
        cancelled = await server.recv()
        assert cancelled["id"] == "slow"
        assert cancelled["error"]["code"] == codes.CANCELLED
        assert await server.rest() == []
        assert await server.wait() == 0


async def test_eof_finishes_in_flight_work_then_exits_zero(tmp_path: Path) -> None:
    async with running_server(tmp_path) as server:
        await server.send(
            {"jsonrpc": "2.0", "id": 1, "method": "slow", "params": {"seconds": 0.3, "tag": "a"}}
        )
        await server.send(
            {"jsonrpc": "2.0", "id": 2, "method": "slow", "params": {"seconds": 0.1, "tag": "b"}}
        )
        await server.close_stdin()
        answers = await server.rest()
        assert sorted((a["id"], a["result"]["tag"]) for a in answers) == [(1, "a"), (2, "b")]
        assert await server.wait() == 0
        assert "clean exit" in server.stderr()


# --- server-to-client requests ------------------------------------------------------------------


async def test_a_server_to_client_request_round_trips(tmp_path: Path) -> None:
    async with server_in_task(tmp_path) as server:
        await server.send(
            {"jsonrpc": "2.0", "id": "ask", "method": "ask_client", "params": {"text": "hello"}}
        )
        question = await server.recv()
        assert question["method"] == "client/echo"
        assert question["params"] == {"text": "hello"}
        assert "id" in question
        # Meanwhile the server still answers requests.
        await assert_still_serving(server)
        await server.send({"jsonrpc": "2.0", "id": question["id"], "result": {"echoed": "hello"}})
        answer = await server.recv()
        assert answer == {"jsonrpc": "2.0", "result": {"answer": {"echoed": "hello"}}, "id": "ask"}


async def test_an_error_answer_from_the_client_reaches_the_waiting_handler(tmp_path: Path) -> None:
    async with server_in_task(tmp_path) as server:
        await server.send({"jsonrpc": "2.0", "id": 1, "method": "ask_client", "params": {"text": "?"}})
        question = await server.recv()
        await server.send(
            {"jsonrpc": "2.0", "id": question["id"], "error": {"code": -32050, "message": "user said no"}}
        )
        answer = await server.recv()
        assert answer["id"] == 1
        assert answer["error"] == {"code": -32050, "message": "user said no"}


async def test_an_unexpected_response_is_ignored_and_logged(tmp_path: Path) -> None:
    async with running_server(tmp_path) as server:
        await server.send({"jsonrpc": "2.0", "id": 999, "result": {"x": 1}})
        await server.send({"jsonrpc": "2.0", "id": 998, "error": {"code": 1, "message": "m"}})
        await assert_still_serving(server)
        await server.close_stdin()
        assert await server.wait() == 0
        assert "999" in server.stderr()


async def test_a_pending_server_request_fails_when_the_client_closes_its_input(tmp_path: Path) -> None:
    async with running_server(tmp_path) as server:
        await server.send({"jsonrpc": "2.0", "id": 1, "method": "ask_client", "params": {"text": "?"}})
        question = await server.recv()
        assert question["method"] == "client/echo"
        await server.close_stdin()
        (answer,) = await server.rest()
        assert answer["id"] == 1
        assert answer["error"]["code"] == codes.INTERNAL_ERROR
        assert "ConnectionClosedError" in answer["error"]["message"]
        assert await server.wait() == 0
