"""What the server sends back of the client's input: ids exactly, other input only in part.

``in_process``: the bytes of the answers are the point, not the pipes; the raw server is then a
task whose socket is read and written by the same line reader and writer a process uses."""

from __future__ import annotations

import orjson
import pytest

from e2e.conftest import E2E, JsonDict, RawServer
from rpc_agent.server import errors as codes

pytestmark = [pytest.mark.anyio, pytest.mark.in_process]


BIG = 5_000_000
"""Characters of an oversized id: big enough that echoing it would be obvious, quick to pipe."""


async def test_errors_quote_only_a_prefix_of_huge_input(e2e: E2E) -> None:
    huge = "Z" * BIG
    async with e2e.raw() as server:
        assert (await server.call("prompt", {"message": "hello"}))["result"]["stopReason"] == "stop"
        requests: list[tuple[str, JsonDict, int]] = [
            ("navigate_tree", {"targetId": huge}, codes.ENTRY_NOT_FOUND),
            ("set_label", {"entryId": huge, "label": "x"}, codes.ENTRY_NOT_FOUND),
            ("fork", {"entryId": huge}, codes.ENTRY_NOT_FOUND),
            ("set_model", {"modelId": huge}, codes.INVALID_PARAMS),
            ("set_thinking_level", {"level": huge}, codes.INVALID_PARAMS),
            ("prompt", {"message": 5, huge: 1}, codes.INVALID_PARAMS),  # pydantic's loc and input
            (huge, {}, codes.METHOD_NOT_FOUND),
        ]
        for index, (method, params, code) in enumerate(requests):
            await server.send({"jsonrpc": "2.0", "id": index, "method": method, "params": params})
            line = await server.recv_line()
            assert line is not None
            assert len(line) < 2000, (method[:20], len(line))
            answer = orjson.loads(line)
            assert (answer["id"], answer["error"]["code"]) == (index, code), line[:500]
            assert f"…({BIG} chars)" in line.decode(), line[:500]
        # A long list as input is cut too, in pydantic's error data.
        answer = await server.call("navigate_tree", {"targetId": ["y" * 100] * 100_000})
        assert answer["error"]["code"] == codes.INVALID_PARAMS
        assert len(orjson.dumps(answer)) < 4000
        # So is a deeply nested one.
        await server.send_raw(
            b'{"jsonrpc":"2.0","id":"deep","method":"navigate_tree","params":{"targetId":'
            + b"[" * 500
            + b"]" * 500
            + b"}}\n"
        )
        answer = await server.recv()
        assert (answer["id"], answer["error"]["code"]) == ("deep", codes.INVALID_PARAMS)
        assert len(orjson.dumps(answer)) < 4000
        assert (await server.call("get_state"))["result"]["isStreaming"] is False


RAW_IDS = [
    b"123456789012345678901234567890",
    b"-18446744073709551617",
    b"9223372036854775807",
    b"1.10",
    b"1e2",
    b"-0.5",
    b"12345678901234567890.000000000000000000001",
]


async def test_numeric_ids_are_echoed_byte_for_byte(e2e: E2E) -> None:
    # One server for every id: each answer is checked against the request just sent.
    async with e2e.raw() as server:
        for raw_id in RAW_IDS:
            await _echo_every_kind_of_answer(server, raw_id)


async def _echo_every_kind_of_answer(server: RawServer, raw_id: bytes) -> None:
    ending = b',"id":' + raw_id + b"}"
    # An inline method, an async one, an error, and a batch: every kind of answer.
    await server.send_raw(b'{"jsonrpc":"2.0","id":' + raw_id + b',"method":"get_state"}\n')
    assert (await server.recv_line() or b"").endswith(ending), raw_id
    await server.send_raw(
        b'{"jsonrpc":"2.0","id":' + raw_id + b',"method":"set_thinking_level","params":{"level":"off"}}\n'
    )
    assert (await server.recv_line() or b"").endswith(ending), raw_id
    await server.send_raw(b'{"jsonrpc":"2.0","id":' + raw_id + b',"method":"no_such_method"}\n')
    assert (await server.recv_line() or b"").endswith(ending), raw_id
    # A second "id" member in the line (in the params) does not confuse the echo.
    await server.send_raw(
        b'{"jsonrpc":"2.0","params":{"id":' + raw_id + b'0},"id":' + raw_id + b',"method":"get_state"}\n'
    )
    assert (await server.recv_line() or b"").endswith(ending), raw_id
    await server.send_raw(
        b'[{"jsonrpc":"2.0","id":"s","method":"get_state"},'
        b'{"jsonrpc":"2.0","id":' + raw_id + b',"method":"get_state"}]\n'
    )
    batch = await server.recv_line() or b""
    assert batch.endswith(ending + b"]"), raw_id
