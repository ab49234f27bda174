"""The JSON-RPC 2.0 lines over real pipes (``rpc_test_server.py``): what the server does with a
line that is not JSON, not UTF-8, ends in CRLF, is blank, holds line separators or spans many
reads, and a stdout that carries only JSON-RPC lines even when a handler prints."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from rpc_agent.server import errors as codes
from server.server_testlib import assert_still_serving, ping, running_server, server_in_task

pytestmark = pytest.mark.anyio


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
