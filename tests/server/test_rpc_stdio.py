"""The JSON-RPC 2.0 contract over real pipes: a small server built from the router, driven the
way an editor drives rpc-agent. Every error answer to a request must carry its id, the server
must keep serving after anything, and stdout must only ever carry JSON-RPC lines.

The server is a process where the process is the point (EOF, SIGTERM, stderr, writes to fd 1);
elsewhere it is served in the test's event loop over a socket pair (``server_in_task``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest

from rpc_agent.server import errors as codes
from server.server_testlib import RpcServer, ids_and_codes, running_server, server_in_task

pytestmark = pytest.mark.anyio

PING = {"jsonrpc": "2.0", "method": "ping"}


def ping(request_id: Any) -> dict[str, Any]:
    return {**PING, "id": request_id}


async def assert_still_serving(server: RpcServer) -> None:
    answer = await server.call("ping", request_id="still-alive")
    assert answer == {"jsonrpc": "2.0", "result": {"pong": True}, "id": "still-alive"}


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


# --- framing ------------------------------------------------------------------------------------


async def test_garbage_gets_a_parse_error_with_null_id_and_the_server_keeps_serving(tmp_path: Path) -> None:
    async with server_in_task(tmp_path) as server:
        for garbage in [
            b"garbage",
            b"{]",
            b"\x00\x01\x02",
            b'{"jsonrpc": "2.0", "id": 1, "method": "ping",}',
        ]:
            await server.send_raw(garbage + b"\n")
            answer = await server.recv()
            assert answer["id"] is None
            assert answer["error"]["code"] == codes.PARSE_ERROR
            assert answer["error"]["message"].startswith("Parse error")
        await assert_still_serving(server)


async def test_truncated_json_gets_a_parse_error_and_the_next_line_is_served(tmp_path: Path) -> None:
    async with server_in_task(tmp_path) as server:
        await server.send_raw(b'{"jsonrpc":"2.0","id":1,"method":"echo","params":{"text":"cut\n')
        await server.send_raw(orjson.dumps(ping(2)) + b"\n")
        first, second = await server.recv(), await server.recv()
        assert first["error"]["code"] == codes.PARSE_ERROR
        assert first["id"] is None
        assert second == {"jsonrpc": "2.0", "result": {"pong": True}, "id": 2}


async def test_invalid_utf8_is_a_parse_error(tmp_path: Path) -> None:
    async with server_in_task(tmp_path) as server:
        await server.send_raw(b'{"jsonrpc":"2.0","id":1,"method":"echo","params":{"text":"\xff\xfe"}}\n')
        answer = await server.recv()
        assert answer["error"]["code"] == codes.PARSE_ERROR
        await assert_still_serving(server)


async def test_crlf_lines_are_accepted_and_answers_end_in_bare_lf(tmp_path: Path) -> None:
    async with server_in_task(tmp_path) as server:
        await server.send_raw(b'{"jsonrpc":"2.0","id":1,"method":"echo","params":{"text":"crlf"}}\r\n')
        await server.send_raw(b'{"jsonrpc":"2.0","id":2,"method":"ping"}\r\n')
        assert (await server.recv())["result"]["text"] == "crlf"
        assert (await server.recv())["id"] == 2
        assert all(not line.endswith(b"\r") for line in server.raw_lines)


async def test_blank_lines_are_ignored(tmp_path: Path) -> None:
    async with server_in_task(tmp_path) as server:
        await server.send_raw(b"\n\r\n\n")
        await assert_still_serving(server)


async def test_unicode_line_separators_inside_strings_round_trip_intact(tmp_path: Path) -> None:
    text = "one\u2028two\u2029three\x85four\x0cfive\u000bsix"
    async with server_in_task(tmp_path) as server:
        line = orjson.dumps({"jsonrpc": "2.0", "id": 1, "method": "echo", "params": {"text": text}})
        assert "\u2028".encode() in line  # sent raw, not escaped
        await server.send_raw(line + b"\n")
        answer = await server.recv()
        assert answer["result"]["text"] == text
        # The answer is one line; the separators are escaped so that JS line readers cannot split it.
        assert "\u2028".encode() not in server.raw_lines[-1]
        assert "\u2029".encode() not in server.raw_lines[-1]


async def test_a_large_request_spanning_many_reads_is_one_message(tmp_path: Path) -> None:
    text = "x" * 3_000_000
    async with server_in_task(tmp_path) as server:
        answer = await server.call("echo", {"text": text})
        assert answer["result"]["text"] == text


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


# --- stdout hygiene -----------------------------------------------------------------------------


async def test_stdout_carries_only_json_rpc_lines_even_when_a_handler_prints(tmp_path: Path) -> None:
    async with running_server(tmp_path) as server:
        await server.send({"jsonrpc": "2.0", "id": 1, "method": "print_stray"})
        await server.send_raw(b"not json\n")
        await server.send({"jsonrpc": "2.0", "id": 2, "method": "fail_value"})
        await server.send({"jsonrpc": "2.0", "id": 3, "method": "echo", "params": {"text": "\u2028"}})
        await server.close_stdin()
        messages = await server.rest()
        assert await server.wait() == 0
        assert len(messages) == 4
        for line in server.raw_lines:
            message = orjson.loads(line)
            assert message["jsonrpc"] == "2.0"
            assert ("result" in message) != ("error" in message)
        assert "a stray print" in server.stderr()
        assert "a raw write to fd 1" in server.stderr()
