"""Malformed input over raw pipes: a clear error each time, the server alive, the file intact."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest

from e2e.conftest import E2E, JsonDict, RawServer, read_jsonl
from rpc_agent.server import errors as codes

pytestmark = pytest.mark.anyio


async def assert_alive(server: RawServer, session_file: Path, entries: list[JsonDict]) -> None:
    answer = await server.call("get_state")
    assert answer["result"]["sessionFile"] == str(session_file)
    assert read_jsonl(session_file)[1:] == entries


def error_of(answer: JsonDict, code: int) -> JsonDict:
    assert "result" not in answer, answer
    assert answer["error"]["code"] == code, answer
    assert isinstance(answer["error"]["message"], str)
    return dict(answer["error"])


async def test_malformed_input_gets_clear_errors_and_changes_nothing(e2e: E2E) -> None:
    async with e2e.raw() as server:
        first = await server.call("prompt", {"message": "hello"})
        assert first["result"]["stopReason"] == "stop"
        session_file = Path((await server.call("get_state"))["result"]["sessionFile"])
        entries = read_jsonl(session_file)[1:]
        # A new session's model and thinking level (as pi writes them), the prompt, the answer.
        assert [e["type"] for e in entries] == ["model_change", "thinking_level_change", "message", "message"]

        # Not JSON at all, and JSON cut short: parse errors with a null id.
        for line in [b"garbage", b"\x00\xff{", b'{"jsonrpc":"2.0","id":5,"method":"get_state"']:
            await server.send_raw(line + b"\n")
            answer = await server.recv()
            assert answer["id"] is None
            error_of(answer, codes.PARSE_ERROR)
            await assert_alive(server, session_file, entries)

        # Wrong param types: -32602 with pydantic's error list, and the request's id.
        answer = await server.call("prompt", {"message": 5}, request_id=41)
        error = error_of(answer, codes.INVALID_PARAMS)
        assert [(e["type"], e["loc"]) for e in error["data"]] == [("string_type", ["message"])]
        answer = await server.call("navigate_tree", {"targetId": 3, "summarize": "maybe"}, request_id="nav")
        error = error_of(answer, codes.INVALID_PARAMS)
        assert sorted(tuple(e["loc"]) for e in error["data"]) == [("summarize",), ("targetId",)]
        assert all({"type", "loc", "msg"} <= set(e) for e in error["data"])
        answer = await server.call("switch_session", {}, request_id=43)
        assert error_of(answer, codes.INVALID_PARAMS)["data"][0]["type"] == "missing"
        # An unknown field is an error too (a typo must not be ignored), and so are params that
        # are not an object, and params for a method that takes none.
        answer = await server.call("prompt", {"message": "hi", "streamingBehaviour": "steer"})
        error = error_of(answer, codes.INVALID_PARAMS)
        assert error["data"][0]["type"] == "extra_forbidden"
        assert error["data"][0]["loc"] == ["streamingBehaviour"]
        error_of(await server.call("prompt", "hi"), codes.INVALID_PARAMS)
        error_of(await server.call("get_state", {"verbose": True}), codes.INVALID_PARAMS)
        await assert_alive(server, session_file, entries)

        # Unknown method: -32601 with the id.
        answer = await server.call("frobnicate", {"x": 1}, request_id="unknown-1")
        assert "frobnicate" in error_of(answer, codes.METHOD_NOT_FOUND)["message"]
        # Not a JSON-RPC 2.0 request.
        await server.send({"jsonrpc": "1.0", "id": 7, "method": "get_state"})
        answer = await server.recv()
        assert answer["id"] == 7
        error_of(answer, codes.INVALID_REQUEST)
        await server.send([])
        error_of(await server.recv(), codes.INVALID_REQUEST)
        await assert_alive(server, session_file, entries)

        # A batch mixing good and bad items: one answer per request, in order; none for the
        # notification.
        batch: list[Any] = [
            {"jsonrpc": "2.0", "id": 1, "method": "get_state"},
            {"jsonrpc": "2.0", "id": 2, "method": "no_such_method"},
            {"jsonrpc": "2.0", "method": "get_state"},
            {"jsonrpc": "2.0", "id": 3, "method": "set_label", "params": {"entryId": 12}},
            "not an object",
            {"jsonrpc": "2.0", "id": 4, "method": "get_tree"},
            {"jsonrpc": "2.0", "id": 5, "method": "set_label", "params": {"entryId": "nope", "label": "x"}},
        ]
        await server.send(batch)
        answers = await server.recv()
        assert isinstance(answers, list)
        summary = [(a["id"], a["error"]["code"] if "error" in a else "ok") for a in answers]
        assert summary == [
            (1, "ok"),
            (2, codes.METHOD_NOT_FOUND),
            (3, codes.INVALID_PARAMS),
            (None, codes.INVALID_REQUEST),
            (4, "ok"),
            (5, codes.ENTRY_NOT_FOUND),
        ]
        assert len(answers[4]["result"]["nodes"]) == 4  # model, thinking level, prompt, answer
        await assert_alive(server, session_file, entries)

        # CRLF line ends are accepted; U+2028 inside a string never splits a line.
        await server.send_raw(b'{"jsonrpc":"2.0","id":"crlf","method":"get_state"}\r\n')
        assert (await server.recv())["id"] == "crlf"
        answer = await server.call("prompt", {"message": "line\u2028separator\u2029here"})
        assert answer["result"]["messages"][0]["content"] == "line\u2028separator\u2029here"
        entries = read_jsonl(session_file)[1:]
        assert len(entries) == 6

        assert await server.close_and_wait() == 0
    # Everything on stdout was a JSON-RPC line.
    for line in server.lines:
        message = orjson.loads(line)
        for item in message if isinstance(message, list) else [message]:
            assert item["jsonrpc"] == "2.0"
        assert "\u2028".encode() not in line
    assert read_jsonl(session_file)[1:] == entries


@pytest.mark.in_process  # the agent's busy error and its id, not the pipes
async def test_busy_error_carries_the_request_id(e2e: E2E) -> None:
    slow = {"text": " ".join(f"w{i}" for i in range(60)), "delayMs": 400}
    async with e2e.raw(script=[slow]) as server:
        await server.send({"jsonrpc": "2.0", "id": "slow", "method": "prompt", "params": {"message": "go"}})
        while not any(e["type"] == "message_update" for e in server.events):
            line = await server.recv_line()
            assert line is not None
            message = orjson.loads(line)
            assert message.get("method") == "event", message
            server.events.append(message["params"])
        answer = await server.call("prompt", {"message": "me too"}, request_id="busy")
        assert error_of(answer, codes.AGENT_BUSY)
        answer = await server.call("abort", request_id="stop")
        assert answer["result"] == {"aborted": True}
        answer = await server.recv()
        assert answer["id"] == "slow"
        assert answer["result"]["stopReason"] == "aborted"
        assert await server.close_and_wait() == 0
